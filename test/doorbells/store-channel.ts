/**
 * On PostgreSQL every message write sends its event from its own statement (one round trip,
 * combined per instance): the message log must see the PostgreSQL doorbell's channel, or every
 * write silently falls back to a transaction of four round trips. The counts still see every write.
 */
import t from 'tap'
import { createMemoryDoorbell } from '../../lib/core/realtime/memory-doorbell.js'
import { statementChannel } from '../../lib/core/realtime/message-log.js'
import type { Store } from '../../lib/core/ports.js'
import { startServer } from '../../lib/start-server.js'
import { call } from '../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

t.test('writes ride the statement only with a bus that names a channel, on a PostgreSQL store', async (t) => {
  const postgres = { dialect: 'postgres' } as Store
  const sqlite = { dialect: 'sqlite' } as Store
  t.equal(statementChannel(createMemoryDoorbell(), postgres), undefined, 'memory doorbell: writers publish')
  const notifying = { ...createMemoryDoorbell(), notifyChannel: 'chan' }
  t.equal(statementChannel(notifying, postgres), 'chan')
  t.equal(statementChannel(notifying, sqlite), undefined, 'a SQLite store has no NOTIFY: writers publish')
})

postgresTest('PostgreSQL: the hub writes through the store channel and counts every write', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const server = await startServer({ db, jwtSecret: 'store-channel-secret', admin: { password: 'store-channel-pass' } })
  t.teardown(() => server.close())
  const { hub } = server
  t.type(statementChannel(hub.bus, hub.store), 'string', 'the channel reaches the message log')
  const token = (await server.adminTokens()).accessToken
  t.equal((await call(`${server.url}/device/sc-1`, token, { method: 'PUT', body: { name: 'sc-1' } })).status, 204)
  const before = { ...hub.stats.messagesWritten }
  t.equal((await call(`${server.url}/device/sc-1/notification`, token, { method: 'POST', body: { notification: 'n' } })).status, 201)
  const command = await call(`${server.url}/device/sc-1/command`, token, { method: 'POST', body: { command: 'c' } })
  t.equal(command.status, 201)
  t.equal((await call(`${server.url}/device/sc-1/command/${command.body.id}`, token, { method: 'PUT', body: { status: 'done' } })).status, 204)
  const after = hub.stats.messagesWritten
  t.same([after.notification - before.notification, after.command - before.command, after['command-update'] - before['command-update']], [1, 1, 1])
})
