/**
 * On PostgreSQL every message write rings from its own statement (one round trip, combined per
 * instance): the hub's doorbell, wrapped to count writes, must still offer the store channel,
 * or every write silently falls back to a transaction of four round trips. The counts still see
 * every write.
 */
import t from 'tap'
import { createMemoryDoorbell } from '../../lib/core/realtime/memory-doorbell.js'
import type { Doorbell, DoorbellEvent } from '../../lib/core/realtime/doorbell.js'
import { countingDoorbell } from '../../lib/core/operations/hub-stats.js'
import { startServer } from '../../lib/start-server.js'
import { call } from '../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

t.test('the counting wrapper forwards the store channel only when the inner doorbell has one, and counts store rings', async (t) => {
  const counts = { command: 0, 'command-update': 0, notification: 0 }
  t.equal(countingDoorbell(createMemoryDoorbell(), counts).storeChannel, undefined, 'memory doorbell: writers publish')
  const rang: DoorbellEvent[] = []
  const inner: Doorbell = { ...createMemoryDoorbell(), storeChannel: () => 'chan', storeRang: (e) => { rang.push(e) } }
  const counting = countingDoorbell(inner, counts)
  t.equal(counting.storeChannel?.({} as never), 'chan')
  const event = (kind: DoorbellEvent['kind']): DoorbellEvent => ({ kind, id: 1, deviceId: 'd', networkId: 1, deviceTypeId: 1, name: 'n' })
  counting.storeRang?.(event('notification'))
  counting.storeRang?.(event('command'))
  counting.storeRang?.(event('command-update'))
  t.same(counts, { command: 1, 'command-update': 1, notification: 1 })
  t.equal(rang.length, 3, 'forwarded')
})

postgresTest('PostgreSQL: the hub writes through the store channel and counts every write', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const server = await startServer({ db, jwtSecret: 'store-channel-secret', admin: { password: 'store-channel-pass' } })
  t.teardown(() => server.close())
  const { hub } = server
  t.type(hub.doorbell.storeChannel?.(hub.store), 'string', 'the store channel reaches the services')
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
