/**
 * Cost per request kind (issue #26 point 1): runs a devicehub server in this process on a fresh
 * SQLite file and counts, per request, the SQL statements run (by text), HMAC computations (JWT
 * signature checks), principals built (distinct principal objects handed to routes) and
 * `JSON.stringify` / `JSON.parse` calls. The client side of the measurement uses the original
 * JSON functions, so only the server's calls are counted.
 *
 * Not a benchmark: counts, not times. Run: `node --import tsx scripts/cost-breakdown.ts [n]`
 * (n requests per kind, default 200); `--statements` lists each kind's statements.
 */
import type * as NodeCrypto from 'node:crypto'
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON, read by field
type Json = any
const originalStringify = JSON.stringify
const originalParse = JSON.parse

interface Counters {
  statements: Map<string, number>
  /** Microseconds spent in the driver per statement text. */
  statementUs: Map<string, number>
  hmacs: number
  principals: number
  stringify: number
  parse: number
}

function newCounters (): Counters {
  return { statements: new Map(), statementUs: new Map(), hmacs: 0, principals: 0, stringify: 0, parse: 0 }
}

let counters = newCounters()

// Before fast-jwt loads: it takes `createHmac` from node:crypto once, at load.
const crypto = require('node:crypto') as typeof NodeCrypto
const createHmac = crypto.createHmac
crypto.createHmac = ((...args: Parameters<typeof createHmac>) => {
  counters.hmacs++
  return createHmac(...args)
}) as typeof createHmac

JSON.stringify = ((...args: Parameters<typeof originalStringify>) => {
  counters.stringify++
  return originalStringify(...args)
}) as typeof originalStringify
JSON.parse = ((...args: Parameters<typeof originalParse>) => {
  counters.parse++
  return originalParse(...args)
}) as typeof originalParse

/** Wraps the SQLite driver's statement methods (better-sqlite3 on Node 20, node:sqlite later). */
function countStatements (): void {
  const record = (sql: string, us: number): void => {
    const text = sql.replace(/\s+/g, ' ').trim().slice(0, 140)
    counters.statements.set(text, (counters.statements.get(text) ?? 0) + 1)
    counters.statementUs.set(text, (counters.statementUs.get(text) ?? 0) + us)
  }
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
      const started = performance.now()
      try {
        return method.apply(this, args)
      } finally {
        record(sourceOf(this), (performance.now() - started) * 1000)
      }
    }
  }
}

countStatements()

const { startServer } = await import('../lib/start-server.js')
const { WebSocket } = await import('ws')

const n = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 200)
const listStatements = process.argv.includes('--statements')
const dir = mkdtempSync(join(tmpdir(), 'devicehub-cost-'))
const server = await startServer({ db: join(dir, 'cost.db'), admin: { password: 'cost-admin-password' }, logger: false })
const { accessToken: token } = await server.adminTokens()
for (let i = 0; i < 20; i++) {
  await server.hub.store.devices.insert({ id: `dev-${i}`, name: `dev ${i}`, data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
}

// Principals built: a route sees a principal object it has not seen before.
const seen = new WeakSet<object>()
const authenticate = server.hub.tokens.authenticate.bind(server.hub.tokens)
server.hub.tokens.authenticate = async (value: string) => {
  const principal = await authenticate(value)
  if (!seen.has(principal)) {
    seen.add(principal)
    counters.principals++
  }
  return principal
}

async function call (method: string, path: string, body?: unknown): Promise<{ status: number, body: Json }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : originalStringify(body)
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : originalParse(text) }
}

interface Row { kind: string, counters: Counters, requests: number }
const rows: Row[] = []

/** Runs `step` n times (after 20 unmeasured ones) and records the counts per `requests` of it. */
async function measure (kind: string, requestsPerStep: number, step: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < 20; i++) await step(i)
  await settle()
  counters = newCounters()
  for (let i = 0; i < n; i++) await step(i)
  await settle()
  rows.push({ kind, counters, requests: n * requestsPerStep })
  counters = newCounters()
}

/** Lets batched writes (the write combiner) and deliveries finish. */
async function settle (): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50))
}

const device = 'dev-0'
await measure('insert: POST /device/{id}/notification', 1, async (i) => {
  await call('POST', `/device/${device}/notification`, { notification: 'temp', parameters: { t: i } })
})

await measure('command insert: POST /device/{id}/command', 1, async () => {
  await call('POST', `/device/${device}/command`, { command: 'ping', parameters: { n: 1 } })
})

// A poll answered from the backlog (the command was written before it).
const ids: number[] = []
await measure('command insert + poll answered from backlog: 2 requests', 2, async () => {
  const posted = await call('POST', `/device/dev-1/command`, { command: 'ping', parameters: { n: 1 } })
  ids.push(posted.body.id)
  const cursor = new Date(Date.parse(posted.body.timestamp) - 1).toISOString()
  await call('GET', `/device/dev-1/command/poll?waitTimeout=0&names=ping&timestamp=${cursor}`)
})

await measure('command update: PUT /device/{id}/command/{id}', 1, async (i) => {
  const id = ids[i % ids.length]!
  await call('PUT', `/device/dev-1/command/${id}`, { status: 'Done', result: { ok: true } })
})

await measure('command wait, already updated: GET …/command/{id}/poll', 1, async (i) => {
  await call('GET', `/device/dev-1/command/${ids[i % ids.length]!}/poll?waitTimeout=30`)
})

// The bench's round trip: device parked on its poll, client posts, device receives and updates,
// client waits (parked until the update).
await measure('round trip (post, parked poll, update, parked wait): 4 requests', 4, async () => {
  const started = (await call('POST', `/device/dev-2/command`, { command: 'cursor' })).body.timestamp as string
  const poll = call('GET', `/device/dev-2/command/poll?waitTimeout=30&names=ping&timestamp=${started}`)
  await settle()
  const posted = await call('POST', `/device/dev-2/command`, { command: 'ping', parameters: { n: 1 } })
  const wait = call('GET', `/device/dev-2/command/${posted.body.id}/poll?waitTimeout=30`)
  const commands = (await poll).body as Array<{ id: number }>
  await settle()
  for (const command of commands) await call('PUT', `/device/dev-2/command/${command.id}`, { status: 'Done', result: { ok: true } })
  const done = await wait
  if (done.body?.status !== 'Done') throw new Error('round trip failed')
})

// WebSocket push: `subscribers` sockets subscribed to one device; the REST insert is counted too.
async function openSubscribers (count: number, deviceId: string): Promise<Array<{ received: number, socket: InstanceType<typeof WebSocket> }>> {
  const url = `${server.url.replace(/^http/, 'ws').replace(/\/rest$/, '')}/websocket`
  const out: Array<{ received: number, socket: InstanceType<typeof WebSocket> }> = []
  for (let i = 0; i < count; i++) {
    const socket = new WebSocket(url)
    await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject) })
    const entry = { received: 0, socket }
    const replies: Array<(message: Json) => void> = []
    socket.on('message', (data) => {
      const message = originalParse(String(data))
      if (message.action === 'notification/insert' && message.notification !== undefined && message.subscriptionId !== undefined) entry.received++
      else replies.shift()?.(message)
    })
    const ask = async (message: object): Promise<Json> => await new Promise((resolve) => { replies.push(resolve); socket.send(originalStringify(message)) })
    await ask({ action: 'authenticate', token })
    await ask({ action: 'notification/subscribe', deviceId })
    out.push(entry)
  }
  return out
}

for (const subscribers of [1, 10]) {
  const clients = await openSubscribers(subscribers, `dev-${3 + subscribers}`)
  await measure(`insert + WebSocket push to ${subscribers} subscriber(s)`, 1, async (i) => {
    const before = clients.reduce((sum, c) => sum + c.received, 0)
    await call('POST', `/device/dev-${3 + subscribers}/notification`, { notification: 'temp', parameters: { t: i } })
    while (clients.reduce((sum, c) => sum + c.received, 0) < before + subscribers) await new Promise((resolve) => setTimeout(resolve, 1))
  })
  for (const client of clients) client.socket.close()
}

await server.close()
rmSync(dir, { recursive: true, force: true })

const total = (c: Counters): number => [...c.statements.values()].reduce((a, b) => a + b, 0)
const per = (value: number, row: Row): string => (value / row.requests).toFixed(2)
console.log(`| request kind | statements | HMACs (JWT checks) | principals built | JSON.stringify | JSON.parse |`)
console.log('|---|---|---|---|---|---|')
for (const row of rows) {
  const c = row.counters
  console.log(`| ${row.kind} | ${per(total(c), row)} | ${per(c.hmacs, row)} | ${per(c.principals, row)} | ${per(c.stringify, row)} | ${per(c.parse, row)} |`)
}
if (listStatements) {
  for (const row of rows) {
    console.log(`\n${row.kind} (per step of ${row.requests / n} request(s)):`)
    const sorted = [...row.counters.statements.entries()].filter(([, count]) => count > 0).sort((a, b) => b[1] - a[1])
    for (const [sql, count] of sorted) console.log(`  ${(count / n).toFixed(2)}  ${((row.counters.statementUs.get(sql) ?? 0) / count).toFixed(0).padStart(4)} µs  ${sql}`)
  }
}
