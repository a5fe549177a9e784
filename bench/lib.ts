/** Shared pieces of the benchmarks: child servers over IPC, a keep-alive JSON client, stats. */
import type { ChildProcess } from 'node:child_process'
import { execFileSync, fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchPostgresUrl, createBenchDatabase } from './pg.js'
import { perfChildArgs, recordPerf } from './perf-record.js'
import type { Answer } from './http-client.js'
import { createHttpClient } from './http-client.js'

export interface ChildServer {
  /** Base URL: the REST base for devicehub, the root for the baseline. */
  url: string
  token: string
  stats(): Promise<{ rss: number, heap: number, waiters: number }>
  /** The child's CPU time so far (user + system, µs), without a GC: what a fixed workload cost it. */
  cpu(): Promise<number>
  /** The same, with the kernel's share of it (system time, µs): syscalls, socket and file writes. */
  cpuTimes(): Promise<{ cpu: number, system: number }>
  stop(): Promise<void>
  /** The database a devicehub child runs on (file path or PostgreSQL URL); undefined for the baseline. */
  db?: string
  /** The MQTT endpoint (`mqtt://127.0.0.1:<port>`), for children started with one. */
  mqtt?: string
}

export interface StartChildOptions {
  /** Run on this already initialised database (a second instance over the same PostgreSQL database). */
  db?: string
  /** devicehub: also serve MQTT (on a port of its own) and report its URL. */
  mqtt?: boolean
  /** Extra environment for the child (e.g. `BENCH_METRICS`), on top of the bench's own. */
  env?: Record<string, string>
  /** A SQLite file even when BENCH_PG_URL is set ((d) compares with SQLite's paced round trip in the same run). */
  sqlite?: boolean
}

let benchDir: string | undefined
let buildDir: string | undefined

/**
 * Compiles lib/ and the child servers to plain JavaScript once per run (about 4 s), so the
 * servers run like a deployed build: no TypeScript loader thread and none of its per-function
 * overhead in the measured memory.
 */
function compiledChildren (): string {
  if (buildDir !== undefined) return buildDir
  const root = fileURLToPath(new URL('..', import.meta.url))
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-bench-build-'))
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  execFileSync(process.execPath, [tsc, '-p', join(root, 'bench', 'tsconfig.children.json'), '--outDir', dir], { stdio: 'inherit' })
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n')
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  buildDir = dir
  return dir
}

/** A database initialised once per run (first start, admin, bench devices) in a throw-away process. */
async function benchDatabase (script: string, sqlite = false): Promise<string> {
  const pgUrl = sqlite ? undefined : benchPostgresUrl()
  if (pgUrl !== undefined) return initialise(script, await createBenchDatabase(pgUrl))
  if (benchDir === undefined) {
    benchDir = mkdtempSync(join(tmpdir(), 'devicehub-bench-'))
    process.on('exit', () => rmSync(benchDir!, { recursive: true, force: true }))
  }
  return initialise(script, join(benchDir, `bench-${Date.now()}.db`))
}

async function initialise (script: string, db: string): Promise<string> {
  const init = fork(script, [], { execArgv: [], env: { ...process.env, BENCH_DB: db, BENCH_INIT: '1' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const [code] = await once(init, 'exit') as [number]
  if (code !== 0) throw new Error(`database initialisation exited with ${code}`)
  return db
}

/** `BENCH_CPU_PROF=<dir>`: a V8 CPU profile of each child server, written into `<dir>`. */
function cpuProfileArgs (): string[] {
  return process.env.BENCH_CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
}

/**
 * Starts the compiled `bench/children/<name>` in its own process (with --expose-gc, so RSS is
 * measured after a collection) and waits for its URL. devicehub gets a fresh SQLite file.
 * `BENCH_CHILD_ARGS` adds Node options the environment cannot carry (`--trace-deopt`, `--perf-basic-prof`).
 */
export async function startChild (name: 'devicehub-server' | 'baseline-server' | 'baseline-mqtt', options: StartChildOptions = {}): Promise<ChildServer> {
  const script = join(compiledChildren(), 'bench', 'children', `${name}.js`)
  const db = name === 'devicehub-server' ? options.db ?? await benchDatabase(script, options.sqlite) : undefined
  const env = { ...process.env, ...options.env, ...(db === undefined ? {} : { BENCH_DB: db }), ...(options.mqtt === true ? { BENCH_MQTT: '1' } : {}) }
  const recorded = name === 'devicehub-server' || (name === 'baseline-server' && process.env.BENCH_PERF_BASELINE === '1')
  const perfArgs = recorded ? perfChildArgs() : []
  const child: ChildProcess = fork(script, [], { execArgv: ['--expose-gc', ...cpuProfileArgs(), ...perfArgs, ...(process.env.BENCH_CHILD_ARGS?.split(' ').filter((a) => a !== '') ?? [])], env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const ready = await new Promise<{ url: string, token: string, mqtt?: string }>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)))
    child.once('message', (m: { type: string, url: string, token: string, mqtt?: string }) => resolve(m))
  })
  child.removeAllListeners('exit')
  const recording = perfArgs.length > 0 ? recordPerf(name === 'devicehub-server' ? 'devicehub' : 'baseline', child.pid!) : undefined
  const cpuTimes = (): Promise<{ cpu: number, system: number }> => new Promise((resolve) => {
    child.once('message', (m: { cpu: number, system: number }) => resolve({ cpu: m.cpu, system: m.system }))
    child.send({ type: 'cpu' })
  })
  return {
    ...ready,
    db,
    stats: () => new Promise((resolve) => {
      child.once('message', (m: { rss: number, heap: number, waiters: number }) => resolve(m))
      child.send({ type: 'stats' })
    }),
    cpu: () => cpuTimes().then((times) => times.cpu),
    cpuTimes,
    stop: async () => {
      await recording?.stop()
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve())
        child.send({ type: 'stop' })
        setTimeout(() => child.kill('SIGKILL'), 5000).unref()
      })
    }
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
const client = createHttpClient()

/**
 * One JSON request from the bench's load generator: the lean client of http-client.ts, or with
 * `BENCH_CLIENT=node` Node's `http.request` over a keep-alive agent, the client of every figure
 * before stop 64 (it costs two to three times the CPU, and kept the bare round trip client-bound).
 */
export function request (method: string, url: string, token: string, body?: unknown): Promise<Answer> {
  return process.env.BENCH_CLIENT === 'node' ? nodeRequest(method, url, token, body) : client.request(method, url, token, body)
}

function nodeRequest (method: string, url: string, token: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string> = { authorization: `Bearer ${token}` }
    if (payload !== undefined) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = String(Buffer.byteLength(payload))
    }
    const req = http.request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString()
        resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

export function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Prints rows as an aligned text table. */
export function printTable (title: string, header: string[], rows: Array<Array<string | number>>): void {
  const cells = [header, ...rows.map((r) => r.map((c) => typeof c === 'number' ? formatNumber(c) : c))]
  const widths = header.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)))
  console.log(`\n${title}`)
  for (const [index, row] of cells.entries()) {
    console.log(row.map((c, i) => String(c).padEnd(widths[i]!)).join('  '))
    if (index === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  }
}

function formatNumber (n: number): string {
  if (!Number.isFinite(n)) return String(n)
  return Number.isInteger(n) ? String(n) : n.toFixed(2)
}
