/**
 * Server CPU time per request (issue #26), an instrument for a loaded machine: wall-clock rates
 * move with whatever else runs, the CPU time the server process itself spends on a fixed amount
 * of work moves much less. Runs devicehub from each source tree given (a checkout of a base
 * commit beside this one) in a child process on a fresh SQLite file, drives a fixed workload
 * from this process and reads the child's `process.cpuUsage()` before and after, alternating the
 * trees `rounds` times.
 *
 * Workloads: `roundtrip` (the bench's (b): 50 device/client pairs, closed loop: post, device
 * poll, update, wait) and `insert` (50 concurrent clients posting notifications).
 *
 * `COST_CPU_PROF=<dir>` writes a V8 CPU profile of each server child into `<dir>`.
 * `BENCH_PG_URL=<superuser url>` runs each child on a fresh PostgreSQL database instead, and adds
 * the database's own CPU per request (every `postgres` process on this machine, from /proc) and
 * the queries sent.
 *
 * `--clients N` (at most 50, the default) runs fewer loops: with 1 every write is a batch of its
 * own, as under a paced load.
 *
 * Run: `node --import tsx scripts/cost-cpu.ts roundtrip|insert <tree> [<tree>...] [--rounds 2] [--count 3000] [--clients 50]`.
 */
import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { startServer as StartServer } from '../lib/start-server.js'
import { benchPostgresUrl, createBenchDatabase, dropBenchDatabases } from '../bench/pg.js'

const PAIRS = 50

interface Child { process: ChildProcess, url: string, token: string }

if (process.env.COST_CPU_CHILD !== undefined) await serve(process.env.COST_CPU_CHILD)
else await main()

/** The child: a devicehub server from one source tree; answers `cpu` with its CPU time (µs) and statement counts. */
async function serve (tree: string): Promise<void> {
  const statements = process.env.COST_CPU_DB!.startsWith('postgres') ? countPgQueries(tree) : countStatements(tree)
  const { startServer } = await import(pathToFileURL(join(tree, 'lib', 'start-server.ts')).href) as { startServer: typeof StartServer }
  const server = await startServer({ db: process.env.COST_CPU_DB!, admin: { password: 'cost-cpu-password' }, logger: false })
  for (let i = 0; i < PAIRS; i++) {
    await server.hub.store.devices.insert({ id: `pair-${i}`, name: `pair ${i}`, data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  }
  const { accessToken } = await server.adminTokens()
  process.on('message', (message: { type: string }) => {
    if (message.type === 'cpu') {
      const usage = process.cpuUsage()
      process.send!({ type: 'cpu', us: usage.user + usage.system, ...statements })
    } else if (message.type === 'stop') {
      server.close().finally(() => process.exit(0))
    }
  })
  process.send!({ type: 'ready', url: server.url, token: accessToken })
}

/** Counts the SQLite statements run and the commits among them (better-sqlite3 on Node 20, node:sqlite later). */
function countStatements (tree: string): { statements: number, commits: number } {
  const counts = { statements: 0, commits: 0 }
  const require = createRequire(join(tree, 'package.json'))
  let prototype: Record<string, unknown>
  let sourceOf: (statement: unknown) => string
  try {
    const Database = require('devicehub-sqlite-node20') as new (path: string) => { prepare(sql: string): object, close(): void }
    const db = new Database(':memory:')
    prototype = Object.getPrototypeOf(db.prepare('select 1')) as Record<string, unknown>
    db.close()
    sourceOf = (statement) => (statement as { source: string }).source
  } catch {
    const { DatabaseSync } = require('node:sqlite') as { DatabaseSync: new (path: string) => { prepare(sql: string): object, close(): void } }
    const db = new DatabaseSync(':memory:')
    prototype = Object.getPrototypeOf(db.prepare('select 1')) as Record<string, unknown>
    db.close()
    sourceOf = (statement) => (statement as { sourceSQL: string }).sourceSQL
  }
  for (const name of ['all', 'run', 'get', 'iterate']) {
    const method = prototype[name] as ((...args: unknown[]) => unknown) | undefined
    if (typeof method !== 'function') continue
    prototype[name] = function (this: unknown, ...args: unknown[]) {
      counts.statements++
      if (/^\s*commit\b/i.test(sourceOf(this))) counts.commits++
      return method.apply(this, args)
    }
  }
  return counts
}

/** Counts the queries sent to PostgreSQL (pg's Client.query; commits are not told apart). */
function countPgQueries (tree: string): { statements: number, commits: number } {
  const counts = { statements: 0, commits: 0 }
  const require = createRequire(join(tree, 'package.json'))
  const pgModule = require('pg') as { Client: { prototype: Record<string, unknown> } }
  const query = pgModule.Client.prototype.query as (...args: unknown[]) => unknown
  pgModule.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    counts.statements++
    return query.apply(this, args)
  }
  return counts
}

/** CPU time (µs) of every `postgres` process now running (clock ticks of 10 ms). */
function postgresCpu (): number {
  let ticks = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.includes('(postgres)')) continue
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch { /* gone */ }
  }
  return ticks * 10_000
}

async function start (tree: string, db: string): Promise<Child> {
  const child = fork(new URL(import.meta.url).pathname, [], {
    // COST_CPU_PROF=<dir>: a V8 CPU profile of each server child (scripts/cpu-profile-summary.ts reads it).
    execArgv: ['--import', 'tsx', ...(process.env.COST_CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env.COST_CPU_PROF}`])],
    env: { ...process.env, COST_CPU_CHILD: tree, COST_CPU_DB: db },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const ready = await new Promise<{ url: string, token: string }>((resolve, reject) => {
    child.once('message', resolve as (message: unknown) => void)
    child.once('exit', (code) => reject(new Error(`child exited ${code}`)))
  })
  return { process: child, url: ready.url, token: ready.token }
}

interface Reading { us: number, statements: number, commits: number }

async function cpu (child: Child): Promise<Reading> {
  return await new Promise((resolve) => {
    child.process.once('message', (message: Reading) => resolve(message))
    child.process.send({ type: 'cpu' })
  })
}

async function call (child: Child, method: string, url: string, body?: unknown): Promise<{ status: number, body: unknown }> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${child.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

/** `count` command round trips over `clients` closed-loop pairs. */
async function roundTrips (child: Child, count: number, clients: number): Promise<void> {
  let left = count
  let serving = true
  const marker = await call(child, 'POST', `${child.url}/device/pair-0/command`, { command: 'cursor' }) as { body: { timestamp: string } }
  const devices = Array.from({ length: clients }, (_, i) => `pair-${i}`)
  const deviceLoops = devices.map(async (device) => {
    let cursor = marker.body.timestamp
    while (serving) {
      const res = await call(child, 'GET', `${child.url}/device/${device}/command/poll?waitTimeout=30&names=ping,stop&timestamp=${cursor}`)
      for (const command of (res.body ?? []) as Array<{ id: number, timestamp: string }>) {
        cursor = command.timestamp
        await call(child, 'PUT', `${child.url}/device/${device}/command/${command.id}`, { status: 'Done', result: { ok: true } })
      }
    }
  })
  const clientLoops = devices.map(async (device) => {
    while (left > 0) {
      left--
      const posted = await call(child, 'POST', `${child.url}/device/${device}/command`, { command: 'ping', parameters: { n: 1 } }) as { body: { id: number } }
      const done = await call(child, 'GET', `${child.url}/device/${device}/command/${posted.body.id}/poll?waitTimeout=30`) as { status: number, body: { status: string } }
      if (done.status !== 200 || done.body.status !== 'Done') throw new Error(`round trip failed: ${done.status}`)
    }
  })
  await Promise.all(clientLoops)
  serving = false
  await Promise.all(devices.map((device) => call(child, 'POST', `${child.url}/device/${device}/command`, { command: 'stop' })))
  await Promise.all(deviceLoops)
}

/** `count` notification inserts from `clients` concurrent clients. */
async function inserts (child: Child, count: number, clients: number): Promise<void> {
  let left = count
  await Promise.all(Array.from({ length: clients }, async (_, i) => {
    while (left > 0) {
      left--
      const res = await call(child, 'POST', `${child.url}/device/pair-${i}/notification`, { notification: 'temp', parameters: { t: left } })
      if (res.status !== 201) throw new Error(`insert failed: ${res.status}`)
    }
  }))
}

async function main (): Promise<void> {
  const args = process.argv.slice(2)
  const option = (name: string, fallback: number): number => {
    const at = args.indexOf(name)
    if (at < 0) return fallback
    const value = Number(args[at + 1])
    args.splice(at, 2)
    return value
  }
  const rounds = option('--rounds', 2)
  const count = option('--count', 3000)
  const clients = Math.min(PAIRS, Math.max(1, option('--clients', PAIRS)))
  const [workload, ...trees] = args
  if ((workload !== 'roundtrip' && workload !== 'insert') || trees.length === 0) {
    console.error('usage: cost-cpu.ts roundtrip|insert <tree> [<tree>...] [--rounds 2] [--count 3000] [--clients 50]')
    process.exit(2)
  }
  const run = workload === 'roundtrip' ? roundTrips : inserts
  const results = new Map<string, number[]>(trees.map((tree) => [tree, []]))
  for (let round = 0; round < rounds; round++) {
    for (const tree of trees) {
      const dir = mkdtempSync(join(tmpdir(), 'devicehub-cost-cpu-'))
      const pgUrl = benchPostgresUrl()
      const child = await start(resolve(tree), pgUrl === undefined ? join(dir, 'cpu.db') : await createBenchDatabase(pgUrl))
      try {
        await run(child, Math.min(300, count), clients)
        const before = await cpu(child)
        const pgBefore = postgresCpu()
        const started = performance.now()
        await run(child, count, clients)
        const after = await cpu(child)
        const database = pgUrl === undefined ? '' : `, database ${((postgresCpu() - pgBefore) / count).toFixed(0)} µs`
        const us = after.us - before.us
        const wall = performance.now() - started
        results.get(tree)!.push(us / count)
        const per = workload === 'roundtrip' ? 'round trip' : 'insert'
        console.log(`round ${round + 1} ${tree}: ${(us / count).toFixed(0)} µs server CPU per ${per}${database}, ` +
          `${((after.statements - before.statements) / count).toFixed(2)} statements and ${((after.commits - before.commits) / count).toFixed(2)} commits per ${per} ` +
          `(${(count / (wall / 1000)).toFixed(0)}/s wall)`)
      } finally {
        child.process.send({ type: 'stop' })
        await new Promise((resolve) => child.process.once('exit', resolve))
        rmSync(dir, { recursive: true, force: true })
        await dropBenchDatabases()
      }
    }
  }
  const [base] = trees
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  for (const tree of trees) {
    const m = median(results.get(tree)!)
    console.log(`${tree}: median ${m.toFixed(0)} µs${tree === base ? '' : `, ${(m / median(results.get(base!)!)).toFixed(2)} × ${base}`}`)
  }
}
