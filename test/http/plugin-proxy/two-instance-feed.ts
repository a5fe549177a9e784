/**
 * Issue #24: plugin delivery must not skip an id that was drawn but not yet committed. Two
 * instances over one PostgreSQL database (PostgreSQL doorbells), 8 concurrent REST writers (4 per
 * instance) on 4 devices, one plugin on instance A subscribed to every notification: every
 * insert answered 201 must reach the plugin, exactly once. Writes draw ids before they commit,
 * and commits of both instances (and of the two insert lanes of each) land in any order, so a
 * feed read past the doorbell's mark used to deliver id n+1 and move past n for good. The same
 * load on one SQLite instance guards the other dialect.
 */
import t from 'tap'
import type { Test } from 'tap'
import { WebSocket } from 'ws'
import type { RunningServer } from '../../../lib/start-server.js'
import { startServer } from '../../../lib/start-server.js'
import { call } from '../../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../../fixtures/pg-database.js'
import { ProxyClient } from '../../fixtures/plugin-proxy.js'

const WRITERS = 8
const DEVICES = ['feed-0', 'feed-1', 'feed-2', 'feed-3']
/** Inserts in all (the reproduction used 2,000). */
const TOTAL = Number(process.env.DEVICEHUB_FEED_TEST_TOTAL ?? 2_000)

/** Writes TOTAL notifications through `servers` (writers spread evenly); a plugin on the first must get each id once. */
async function everyIdOnce (t: Test, servers: RunningServer[]): Promise<void> {
  const [a] = servers as [RunningServer]
  const token = (await a.adminTokens()).accessToken
  for (const id of DEVICES) t.equal((await call(`${a.url}/device/${id}`, token, { method: 'PUT', body: { name: id } })).status, 204)
  const plugin = (await call(`${a.url}/plugin?returnNotifications=true`, token, { method: 'POST', body: { name: 'feed' } })).body
  t.ok(typeof plugin?.accessToken === 'string', 'plugin registered')

  const client = new ProxyClient(new WebSocket(`${a.url.replace(/^http/, 'ws').replace(/\/rest$/, '')}/plugin/proxy`))
  t.teardown(() => client.ws.terminate())
  await new Promise((resolve, reject) => client.ws.once('open', resolve).once('error', reject))
  t.equal((await client.authenticate(plugin.accessToken)).s, 0, 'authenticated')
  t.equal((await client.subscribe(plugin.topicName)).s, 0, 'subscribed')

  const written: number[] = []
  const failures: string[] = []
  await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
    const base = servers[w % servers.length]!.url
    for (let i = w; i < TOTAL; i += WRITERS) {
      const device = DEVICES[i % DEVICES.length]!
      const res = await call(`${base}/device/${device}/notification`, token, { method: 'POST', body: { notification: 'tick', parameters: { w, i } } })
      if (res.status === 201) written.push(res.body.id)
      else failures.push(`${res.status}`)
    }
  }))
  t.same(failures, [], 'every insert answered 201')
  t.equal(written.length, TOTAL)

  // A lost id never arrives: wait for the count, and on a shortfall report which ids are missing.
  let shortfall: string | undefined
  try {
    await client.waitDeliveries(TOTAL, 20_000)
  } catch (error) {
    shortfall = (error as Error).message
  }
  const received = client.deliveries.map((d) => d.event.b.notification.id as number)
  const got = new Set(received)
  const missing = written.filter((id) => !got.has(id)).sort((x, y) => x - y)
  t.equal(shortfall, undefined, `every delivery arrived (missing ids: ${missing.join(', ') || 'none'})`)
  t.same(missing, [], 'no notification id lost')
  t.equal(received.length, got.size, 'no id delivered twice')
  t.same(received, [...received].sort((x, y) => x - y), 'delivered in id (draw) order')
}

postgresTest('two instances, 8 REST writers: a plugin receives every notification id exactly once', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const options = { db, jwtSecret: 'two-instance-feed-secret', admin: { password: 'two-instance-feed-pass' } }
  const a = await startServer(options)
  t.teardown(() => a.close())
  const b = await startServer(options)
  t.teardown(() => b.close())
  await everyIdOnce(t, [a, b])
})

t.test('one SQLite instance, 8 REST writers: a plugin receives every notification id exactly once', async (t) => {
  const server = await startServer({ db: ':memory:', jwtSecret: 'sqlite-feed-secret', admin: { password: 'sqlite-feed-pass' } })
  t.teardown(() => server.close())
  await everyIdOnce(t, [server])
})
