/**
 * The package's entry points load only their own part (issue #24 point 5): importing the root
 * (`createDeviceHub`) loads neither Fastify nor a database driver. Each entry is imported in a
 * fresh child process that records every module it loads two ways: a module-resolution hook
 * (every ESM `import`, bare or relative, as the loader resolves it) and, after the import, the
 * CommonJS cache (what CommonJS packages such as fastify and pg `require` in turn).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { ROOT } from './fixtures/cli.js'

const run = promisify(execFile)

/** Packages of the Fastify adapter, the database drivers and the WebSocket server. */
const FRAMEWORK = /\/node_modules\/(fastify|@fastify\/[^/]+|find-my-way|light-my-request|avvio)\//
const DRIVERS = /\/node_modules\/(better-sqlite3|better-sqlite3-node20|pg|pg-[^/]+)\//
const WEBSOCKET = /\/node_modules\/ws\//

const HOOKS = `
import { appendFileSync } from 'node:fs'
let log
export function initialize (data) { log = data.log }
export async function resolve (specifier, context, next) {
  const result = await next(specifier, context)
  appendFileSync(log, result.url + '\\n')
  return result
}
`

const REGISTER = `
import { register } from 'node:module'
register('./hooks.mjs', import.meta.url, { data: { log: process.env.ENTRY_LOG } })
`

// Imports the entry, then adds the CommonJS cache (filled by require() inside CommonJS packages) to the log.
const MAIN = `
import { appendFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
const entry = await import(process.env.ENTRY_URL)
const cached = Object.keys(createRequire(import.meta.url).cache).map((file) => pathToFileURL(file).href)
appendFileSync(process.env.ENTRY_LOG, cached.join('\\n') + '\\n')
console.log(JSON.stringify(Object.keys(entry).sort()))
`

const dir = mkdtempSync(join(tmpdir(), 'devicehub-entries-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
writeFileSync(join(dir, 'hooks.mjs'), HOOKS)
writeFileSync(join(dir, 'register.mjs'), REGISTER)
writeFileSync(join(dir, 'main.mjs'), MAIN)

/** Imports `lib/<entry>.ts` (through tsx, as the sources) in a child; the modules it loaded and its export names. */
async function load (entry: string): Promise<{ modules: string[], exports: string[] }> {
  const log = join(dir, `${entry.replaceAll('/', '-')}.log`)
  writeFileSync(log, '')
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--import', join(dir, 'register.mjs'), join(dir, 'main.mjs')], {
    cwd: ROOT,
    env: { ...process.env, ENTRY_LOG: log, ENTRY_URL: pathToFileURL(join(ROOT, 'lib', `${entry}.ts`)).href }
  })
  const modules = [...new Set(readFileSync(log, 'utf8').split('\n').filter((line) => line !== ''))]
  return { modules, exports: JSON.parse(stdout) as string[] }
}

t.test('the root entry loads no Fastify, no database driver, no WebSocket server', async (t) => {
  const { modules, exports } = await load('index')
  t.ok(exports.includes('createDeviceHub'), 'it exports createDeviceHub')
  t.ok(exports.includes('openSqliteStore'), 'and openSqliteStore')
  t.ok(modules.some((url) => url.endsWith('/lib/core/devicehub.ts')), 'the hook saw the core load (the probe works)')
  t.ok(modules.some((url) => /\/node_modules\/kysely\//.test(url)), 'the hook sees packages (kysely, for the SQLite store)')
  t.same(modules.filter((url) => FRAMEWORK.test(url)), [], 'no Fastify module')
  t.same(modules.filter((url) => DRIVERS.test(url)), [], 'no database driver (SQLite\'s loads when a store opens)')
  t.same(modules.filter((url) => WEBSOCKET.test(url)), [], 'no ws')
  t.same(modules.filter((url) => /\/lib\/(http|doorbells|cli)\//.test(url)), [], 'no adapter module of devicehub')
  for (const internal of ['buildServer', 'devicehubPlugin', 'startServer', 'openPostgresStore', 'createPostgresDoorbell', 'postgresOrdering', 'webSocketRegistry']) {
    t.notOk(exports.includes(internal), `the root does not export ${internal}`)
  }
})

t.test('devicehub/fastify loads Fastify (the probe sees it) and exports the plugins, not the WebSocket internals', async (t) => {
  const { modules, exports } = await load('fastify')
  t.ok(modules.some((url) => FRAMEWORK.test(url)), 'Fastify is loaded')
  t.same(modules.filter((url) => DRIVERS.test(url)), [], 'no database driver')
  t.same(exports, ['buildServer', 'devicehubPlugin', 'devicehubWebSocketPlugin'])
})

t.test('devicehub/postgres loads no Fastify and exports the store, the bus and the ordering of the log', async (t) => {
  const { modules, exports } = await load('postgres')
  t.same(modules.filter((url) => FRAMEWORK.test(url)), [], 'no Fastify module')
  t.same(exports, ['createPostgresDoorbell', 'openPostgresStore', 'postgresOrdering'])
})

t.test('devicehub/server exports startServer', async (t) => {
  const { exports } = await load('server')
  t.same(exports, ['startServer'])
})

t.test('package.json maps each entry to its built file and declarations', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { types: string, import: string }> }
  const entries: Record<string, string> = { '.': 'index', './server': 'server', './fastify': 'fastify', './postgres': 'postgres', './testing': 'testing/index' }
  t.same(Object.keys(pkg.exports).sort(), Object.keys(entries).sort(), 'exactly these subpaths')
  for (const [subpath, file] of Object.entries(entries)) {
    t.same(pkg.exports[subpath], { types: `./dist/lib/${file}.d.ts`, import: `./dist/lib/${file}.js` }, subpath)
    t.ok(readFileSync(join(ROOT, 'lib', `${file}.ts`), 'utf8').length > 0, `lib/${file}.ts exists`)
  }
})
