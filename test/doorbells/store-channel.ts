/**
 * On PostgreSQL every message write sends its event from its own statement (one round trip,
 * combined per instance): the message log must get the PostgreSQL bus's channel through the
 * dialect's ordering (`postgresOrdering`), or every write silently falls back to a transaction
 * of four round trips. The counts still see every write.
 */
import t from 'tap'
import { createDeviceHub } from '../../lib/core/devicehub.js'
import type { MessageEvent } from '../../lib/core/realtime/bus.js'
import { createMemoryDoorbell } from '../../lib/core/realtime/memory-doorbell.js'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { postgresOrdering } from '../../lib/store/ordering/postgres-ordering.js'
import { startServer } from '../../lib/start-server.js'
import { call, eventually } from '../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

t.test('the ordering is PostgreSQL\'s: a SQLite store, or an ordering without its bus, is refused', async (t) => {
  const sqlite = await openSqliteStore(':memory:')
  t.teardown(() => sqlite.close())
  const bus = { ...createMemoryDoorbell(), notifyChannel: 'chan', ignoreWritesOf: () => {} }
  t.throws(() => postgresOrdering(sqlite, bus), { message: /needs a PostgreSQL store, not sqlite/ })
  const ordering = async (): Promise<never> => { throw new Error('not built') }
  await t.rejects(createDeviceHub({ store: sqlite, ordering }), { message: /`ordering` orders the events of `bus`/ })
})

postgresTest('PostgreSQL: the hub writes through the store channel and counts every write', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const server = await startServer({ db, jwtSecret: 'store-channel-secret', admin: { password: 'store-channel-pass' } })
  t.teardown(() => server.close())
  const { hub } = server
  const heard: MessageEvent[] = []
  hub.bus.subscribe((event) => { if ('order' in event && !event.name.startsWith('$')) heard.push(event) })
  const token = (await server.adminTokens()).accessToken
  t.equal((await call(`${server.url}/device/sc-1`, token, { method: 'PUT', body: { name: 'sc-1' } })).status, 204)
  const before = { ...hub.stats.messagesWritten }
  t.equal((await call(`${server.url}/device/sc-1/notification`, token, { method: 'POST', body: { notification: 'n' } })).status, 201)
  const command = await call(`${server.url}/device/sc-1/command`, token, { method: 'POST', body: { command: 'c' } })
  t.equal(command.status, 201)
  t.equal((await call(`${server.url}/device/sc-1/command/${command.body.id}`, token, { method: 'PUT', body: { status: 'done' } })).status, 204)
  const after = hub.stats.messagesWritten
  t.same([after.notification - before.notification, after.command - before.command, after['command-update'] - before['command-update']], [1, 1, 1])
  await eventually(() => heard.length >= 3)
  // The hub's own writes reach its listeners from their statements' answers (the bus drops their NOTIFYs).
  t.same(heard.map((event) => [event.kind, event.name]), [['notification', 'n'], ['command', 'c'], ['command-update', 'c']])
  t.ok(heard.every((event) => event.order !== undefined && event.record !== undefined),
    'each write rode its statement: its event carries its link in the draw chain and its record')
  t.equal(hub.stats.doorbellOrder.resyncs, 0, 'no link was missing')
})
