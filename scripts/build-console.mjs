// Builds the web console (console/) into dist/console-app/: one minified ES module bundle
// (preact included), its stylesheet, index.html and the favicon. Run by `npm run build` and
// `prepare`, and by the browser tests before they start a server. Each file is replaced by an
// atomic rename, never by emptying the directory: several test processes build at once, and a
// server starting beside a build must read whole files, never a missing or half-written one.
import { build } from 'esbuild'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import process from 'node:process'
import { gzipSync } from 'node:zlib'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'dist', 'console-app')
mkdirSync(out, { recursive: true })
const bundle = await build({
  entryPoints: { app: join(root, 'console', 'src', 'main.tsx') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: out,
  write: false,
  legalComments: 'none',
  logLevel: 'warning'
})
/** @type {Map<string, Uint8Array>} */
const files = new Map(bundle.outputFiles.map((file) => [basename(file.path), file.contents]))
for (const name of ['app.css', 'index.html']) files.set(name, readFileSync(join(root, 'console', name === 'app.css' ? 'src' : '', name)))
files.set('favicon.svg', readFileSync(join(root, 'console', 'favicon.svg')))
for (const [name, contents] of files) {
  const temporary = join(out, `.${name}.${process.pid}.tmp`)
  writeFileSync(temporary, contents)
  renameSync(temporary, join(out, name))
}
// Files an earlier build wrote and this one did not (a renamed asset) would be served stale.
for (const name of readdirSync(out)) {
  if (!files.has(name) && !name.startsWith('.')) rmSync(join(out, name), { force: true })
}
let gz = 0
for (const f of ['app.js', 'app.css', 'index.html']) gz += gzipSync(files.get(f)).length
process.stdout.write(`console: ${files.get('app.js').length} bytes of JS, ${gz} bytes gzipped in all -> dist/console-app\n`)
