// Builds the web console (console/) into dist/console-app/: one minified ES module bundle
// (preact and uPlot included), its stylesheet, index.html and the favicon. Run by `npm run build` and `prepare`.
import { build } from 'esbuild'
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import process from 'node:process'
import { gzipSync } from 'node:zlib'
import { readFileSync } from 'node:fs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'dist', 'console-app')
// Built aside, then each file renamed into place: a server starting meanwhile (the browser
// tests build and serve concurrently) reads whole files, old or new, never a missing one.
const tmp = `${out}.build-${process.pid}`
rmSync(tmp, { recursive: true, force: true })
mkdirSync(tmp, { recursive: true })
await build({
  entryPoints: { app: join(root, 'console', 'src', 'main.tsx') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: tmp,
  legalComments: 'none',
  logLevel: 'warning'
})
// One stylesheet: uPlot's, the console's and the charts' (styles.css imports them); a file of
// the console's own origin, as the Content-Security-Policy (style-src 'self') requires.
await build({
  entryPoints: { app: join(root, 'console', 'src', 'styles.css') },
  bundle: true,
  minify: true,
  outdir: tmp,
  legalComments: 'none',
  logLevel: 'warning'
})
copyFileSync(join(root, 'console', 'index.html'), join(tmp, 'index.html'))
copyFileSync(join(root, 'console', 'favicon.svg'), join(tmp, 'favicon.svg'))
mkdirSync(out, { recursive: true })
const built = readdirSync(tmp)
for (const f of built) renameSync(join(tmp, f), join(out, f))
for (const f of readdirSync(out)) if (!built.includes(f)) rmSync(join(out, f), { recursive: true, force: true })
rmSync(tmp, { recursive: true, force: true })
let gz = 0
for (const f of ['app.js', 'app.css', 'index.html']) gz += gzipSync(readFileSync(join(out, f))).length
process.stdout.write(`console: ${statSync(join(out, 'app.js')).size} bytes of JS, ${gz} bytes gzipped in all -> dist/console-app\n`)
