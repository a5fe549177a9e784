/**
 * Issue #24: plugin delivery must not skip a message that was drawn but not yet committed, nor
 * repeat one. Two instances over one PostgreSQL database (PostgreSQL doorbells), 8 concurrent REST
 * writers (4 per instance) on 4 devices writing notifications, commands and command updates (each
 * update through the other instance than its command), one plugin on instance A subscribed to
 * all three kinds: every notification, command and command update answered 2xx must reach the
 * plugin exactly once, in stamp order. Writes draw stamps before they commit, and commits of both
 * instances (and of the two insert lanes of each) land in any order, so a read past the log's mark
 * used to deliver stamp n+1 and move past n for good. The resume case drops the plugin's
 * connection mid-stream (no close handshake) and resumes with the last cursor it received on
 * instance B: the rest arrives exactly once. The same load on one SQLite instance guards the
 * other dialect.
 */
import t from 'tap'
import type { Test } from 'tap'
import { WebSocket } from 'ws'
import type { RunningServer } from '../../../lib/start-server.js'
import { startServer } from '../../../lib/start-server.js'
import { decodeLogCursor } from '../../../lib/core/realtime/log-cursor.js'
import { call, eventually } from '../../fixtures/messaging.js'
import type { Delivery } from '../../fixtures/plugin-proxy.js'
import { ProxyClient } from '../../fixtures/plugin-proxy.js'
import { createTestDatabase, postgresTest } from '../../fixtures/pg-database.js'

const WRITERS = 8
const DEVICES = ['feed-0', 'feed-1', 'feed-2', 'feed-3']
/** Rounds per writer: a notification each, a command and its update every other (the reproduction used 2,000 notifications). */
const ROUNDS = Number(process.env.DEVICEHUB_FEED_TEST_ROUNDS ?? 100)
const SENTINEL = 'feed-sentinel'

/** `n:id`, `c:id` or `u:id` (each command is updated once). */
function keyOf ({ event }: Delivery): string {
  if (event.b.notification !== undefined) return `n:${event.b.notification.id}`
  return `${event.b.a === 21 ? 'c' : 'u'}:${event.b.command.id}`
}

function clockOf (delivery: Delivery): number {
  return decodeLogCursor(delivery.cursor)!.clock
}

async function connect (server: RunningServer, accessToken: string, topic: string, cursor?: string): Promise<ProxyClient> {
  const client = new ProxyClient(new WebSocket(`${server.url.replace(/^http/, 'ws').replace(/\/rest$/, '')}/plugin/proxy`))
  await new Promise((resolve, reject) => client.ws.once('open', resolve).once('error', reject))
  const authenticated = await client.authenticate(accessToken)
  if (authenticated.s !== 0) throw new Error(`authenticate failed: ${JSON.stringify(authenticated.p)}`)
  const subscribed = await client.subscribe(topic, cursor === undefined ? {} : { c: cursor })
  if (subscribed.s !== 0) throw new Error(`subscribe failed: ${JSON.stringify(subscribed.p)}`)
  return client
}

/** The writers: every key answered 2xx, and what failed. */
async function write (servers: RunningServer[], token: string): Promise<{ written: string[], failures: string[] }> {
  const written: string[] = []
  const failures: string[] = []
  const expect = (what: string, status: number, wanted: number): boolean => {
    if (status !== wanted) failures.push(`${what}: ${status}`)
    return status === wanted
  }
  await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
    const base = servers[w % servers.length]!.url
    const other = servers[(w + 1) % servers.length]!.url
    for (let r = 0; r < ROUNDS; r++) {
      const device = DEVICES[(w + r) % DEVICES.length]!
      const n = await call(`${base}/device/${device}/notification`, token, { method: 'POST', body: { notification: 'tick', parameters: { w, r } } })
      if (expect('notification', n.status, 201)) written.push(`n:${n.body.id}`)
      if (r % 2 !== 0) continue
      const c = await call(`${base}/device/${device}/command`, token, { method: 'POST', body: { command: 'go', parameters: { w, r } } })
      if (!expect('command', c.status, 201)) continue
      written.push(`c:${c.body.id}`)
      const u = await call(`${other}/device/${device}/command/${c.body.id}`, token, { method: 'PUT', body: { status: 'done', result: { w, r } } })
      if (expect('update', u.status, 204)) written.push(`u:${c.body.id}`)
    }
  }))
  return { written, failures }
}

/**
 * Writes through `servers` while a plugin on the first reads; with `resume`, the plugin's
 * connection is dropped mid-stream and resumed with its last cursor on the last server.
 */
async function everyMessageOnce (t: Test, servers: RunningServer[], resume: boolean): Promise<void> {
  const a = servers[0]!
  const z = servers[servers.length - 1]!
  const token = (await a.adminTokens()).accessToken
  for (const id of DEVICES) t.equal((await call(`${a.url}/device/${id}`, token, { method: 'PUT', body: { name: id } })).status, 204)
  const flags = 'returnNotifications=true&returnCommands=true&returnUpdatedCommands=true'
  const plugin = (await call(`${a.url}/plugin?${flags}`, token, { method: 'POST', body: { name: 'feed' } })).body
  t.ok(typeof plugin?.accessToken === 'string', 'plugin registered')

  const clients: ProxyClient[] = []
  t.teardown(() => { for (const client of clients) client.ws.terminate() })
  clients.push(await connect(a, plugin.accessToken, plugin.topicName))
  const writing = write(servers, token)

  if (resume) {
    const first = clients[0]!
    // Mid-stream: a quarter of what will be written, while the writers still run.
    await first.waitDeliveries(ROUNDS * WRITERS / 2, 20_000)
    first.ws.terminate()
    // P5: the last connection's close makes the plugin INACTIVE; reconnecting before that lands
    // would let the late INACTIVE stop the new connection.
    await eventually(() => first.ws.readyState === WebSocket.CLOSED)
    const inactive = async (): Promise<boolean> => (await call(`${z.url}/plugin?topicName=${plugin.topicName}`, token)).body?.[0]?.status === 'INACTIVE'
    for (let i = 0; i < 200 && !await inactive(); i++) await new Promise((resolve) => setTimeout(resolve, 25))
    t.ok(await inactive(), 'the dropped connection made the plugin INACTIVE')
    const last = first.deliveries[first.deliveries.length - 1]!
    clients.push(await connect(z, plugin.accessToken, plugin.topicName, last.cursor))
  }

  const { written, failures } = await writing
  t.same(failures, [], 'every write answered 201/204')
  t.equal(written.length, WRITERS * (ROUNDS + 2 * Math.ceil(ROUNDS / 2)))
  // Written after every other write was answered: once it arrives, everything before it in
  // stamp order did, so a repeat would show now.
  const sentinel = await call(`${z.url}/device/${DEVICES[0]}/notification`, token, { method: 'POST', body: { notification: SENTINEL } })
  t.equal(sentinel.status, 201)
  const reader = clients[clients.length - 1]!
  let shortfall: string | undefined
  try {
    await reader.waitFor((frame) => frame.t === 'notif' && typeof frame.p?.m === 'string' && frame.p.m.includes(SENTINEL), 20_000)
  } catch (error) {
    shortfall = (error as Error).message
  }

  const deliveries = clients.flatMap((client) => client.deliveries).filter((d) => d.event.b.notification?.notification !== SENTINEL)
  const received = deliveries.map(keyOf)
  const got = new Set(received)
  const missing = written.filter((key) => !got.has(key))
  t.equal(shortfall, undefined, `the sentinel arrived (${received.length} of ${written.length} before it; missing: ${missing.slice(0, 20).join(', ') || 'none'})`)
  t.same(missing, [], 'no notification, command or command update lost')
  t.equal(received.length, got.size, 'nothing delivered twice')
  t.same(new Set(received), new Set(written), 'exactly what was written')
  const clocks = deliveries.map(clockOf)
  t.ok(clocks.every((clock, i) => i === 0 || clock > clocks[i - 1]!), 'in stamp order (across the resume too)')
  if (resume) t.ok(clients[0]!.deliveries.length > 0 && clients[1]!.deliveries.length > 0, `${clients[0]!.deliveries.length} before the drop, ${clients[1]!.deliveries.length} after`)
}

async function twoInstances (t: Test, adminUrl: string): Promise<RunningServer[]> {
  const db = await createTestDatabase(t, adminUrl)
  const options = { db, jwtSecret: 'two-instance-feed-secret', admin: { password: 'two-instance-feed-pass' } }
  const a = await startServer(options)
  t.teardown(() => a.close())
  const b = await startServer(options)
  t.teardown(() => b.close())
  return [a, b]
}

postgresTest('two instances, 8 REST writers: a plugin receives every notification, command and update exactly once, in stamp order', async (t, adminUrl) => {
  await everyMessageOnce(t, await twoInstances(t, adminUrl), false)
})

postgresTest('two instances, 8 REST writers: dropped mid-stream, the plugin resumes on the other instance with its last cursor', async (t, adminUrl) => {
  await everyMessageOnce(t, await twoInstances(t, adminUrl), true)
})

t.test('one SQLite instance, 8 REST writers: every message exactly once, and a resume mid-stream', async (t) => {
  const server = await startServer({ db: ':memory:', jwtSecret: 'sqlite-feed-secret', admin: { password: 'sqlite-feed-pass' } })
  t.teardown(() => server.close())
  await everyMessageOnce(t, [server], true)
})
