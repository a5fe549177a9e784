/**
 * R9 across instances (issue #12): 8 writers spread over two instances over one PostgreSQL
 * database, and on each instance 2 readers re-polling by cursor (notifications of every device,
 * commands of the two devices with a small limit). Writes run concurrently and are
 * group-committed per instance, yet every reader gets every item exactly once, in order.
 */
import { startServer } from '../../lib/start-server.js'
import { call } from '../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

const WRITERS = 8
const PER_WRITER = 30

postgresTest('8 writers on two instances, 2 cursor readers per instance: every item exactly once', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const options = { db, jwtSecret: 'two-instance-cursors-secret', admin: { password: 'two-instance-cursors-pass' } }
  const a = await startServer(options)
  t.teardown(() => a.close())
  const b = await startServer(options)
  t.teardown(() => b.close())
  const token = (await a.adminTokens()).accessToken
  const bases = [a.url, b.url]
  const devices = ['tic-0', 'tic-1']
  for (const id of devices) t.equal((await call(`${a.url}/device/${id}`, token, { method: 'PUT', body: { name: id } })).status, 204)
  const start = (await call(`${a.url}/info`, token)).body.serverTimestamp as string
  const expected = WRITERS * PER_WRITER

  /** Re-polls by cursor until it has `expected` items, then checks that nothing else comes. */
  const reader = async (url: (cursor: string) => string): Promise<number[]> => {
    const seen: number[] = []
    let cursor = start
    const deadline = Date.now() + 60_000
    while (seen.length < expected && Date.now() < deadline) {
      const res = await call(url(cursor), token)
      if (res.status !== 200) throw new Error(`poll answered ${res.status}`)
      for (const item of res.body) seen.push(item.id)
      if (res.body.length > 0) cursor = res.body[res.body.length - 1].timestamp
    }
    const tail = await call(url(cursor).replace('waitTimeout=5', 'waitTimeout=0'), token)
    for (const item of tail.body) seen.push(item.id)
    return seen
  }
  const readers = bases.flatMap((base) => [
    reader((cursor) => `${base}/device/notification/poll?timestamp=${encodeURIComponent(cursor)}&waitTimeout=5`),
    reader((cursor) => `${base}/device/command/poll?deviceIds=${devices.join(',')}&timestamp=${encodeURIComponent(cursor)}&limit=7&waitTimeout=5`)
  ])

  const notifications: number[] = []
  const commands: number[] = []
  await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
    const base = bases[w % 2]!
    for (let i = 0; i < PER_WRITER; i++) {
      const device = devices[(w + i) % 2]!
      const [n, c] = await Promise.all([
        call(`${base}/device/${device}/notification`, token, { method: 'POST', body: { notification: 'tick', parameters: { w, i } } }),
        call(`${base}/device/${device}/command`, token, { method: 'POST', body: { command: 'go', parameters: { w, i } } })
      ])
      if (n.status !== 201 || c.status !== 201) throw new Error(`write answered ${n.status}/${c.status}`)
      notifications.push(n.body.id)
      commands.push(c.body.id)
    }
  }))
  const sorted = (xs: number[]): number[] => [...xs].sort((x, y) => x - y)
  const seenBy = await Promise.all(readers)
  const checks = [['A notifications', notifications], ['A commands', commands], ['B notifications', notifications], ['B commands', commands]] as const
  for (const [i, [label, written]] of checks.entries()) {
    const seen = seenBy[i]!
    t.same(sorted(seen), sorted(written), `${label}: every item exactly once`)
    t.same(seen, sorted(seen), `${label}: in commit (id) order`)
  }
})
