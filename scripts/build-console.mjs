// Builds the web console (console/) into dist/console-app/: one minified ES module bundle
// (preact included), its stylesheet and index.html. Run by `npm run build` and `prepare`.
import { build } from 'esbuild'
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import process from 'node:process'
import { gzipSync } from 'node:zlib'
import { readFileSync } from 'node:fs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'dist', 'console-app')
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
await build({
  entryPoints: { app: join(root, 'console', 'src', 'main.tsx') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: out,
  legalComments: 'none',
  logLevel: 'warning'
})
copyFileSync(join(root, 'console', 'src', 'app.css'), join(out, 'app.css'))
copyFileSync(join(root, 'console', 'index.html'), join(out, 'index.html'))
copyFileSync(join(root, 'console', 'favicon.svg'), join(out, 'favicon.svg'))
let gz = 0
for (const f of ['app.js', 'app.css', 'index.html']) gz += gzipSync(readFileSync(join(out, f))).length
process.stdout.write(`console: ${statSync(join(out, 'app.js')).size} bytes of JS, ${gz} bytes gzipped in all -> dist/console-app\n`)
