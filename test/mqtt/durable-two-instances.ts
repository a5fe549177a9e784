/**
 * Sleepy devices across two instances over one PostgreSQL database (issue #25 point 4): the
 * device subscribes on instance A, sleeps, and wakes up connected to instance B, which resumes
 * its commands from the stored cursor; acknowledgements made on B hold on A.
 */
import { startServer } from '../../lib/start-server.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'
import { commandTopic, connectSleepy, rest, sendCommand, waitForCursor } from '../fixtures/mqtt-sleepy.js'

postgresTest('a device that subscribed on one instance resumes its commands on the other', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const options = { db, port: 0, jwtSecret: 'durable-two-instances-secret-0123456789', admin: { password: 'durable-two-pass' }, mqtt: { port: 0 } }
  const a = await startServer(options)
  t.teardown(() => a.close())
  const b = await startServer(options)
  t.teardown(() => b.close())
  const { accessToken: token } = await a.adminTokens()
  t.equal((await rest(a.url, token, 'PUT', '/device/sleepy-pg', { name: 'sleepy-pg' })).status, 204)

  const onA = await connectSleepy(a.mqttUrl!, token, 'sleepy-pg')
  await onA.client.subscribeAsync(commandTopic('sleepy-pg'), { qos: 1 })
  await onA.close()
  // Created through both instances while the device sleeps.
  const c1 = await sendCommand(a.url, token, 'sleepy-pg', 'one')
  const c2 = await sendCommand(b.url, token, 'sleepy-pg', 'two')
  const c3 = await sendCommand(a.url, token, 'sleepy-pg', 'three')

  const onB = await connectSleepy(b.mqttUrl!, token, 'sleepy-pg', (command) => command.id !== c3)
  t.same((await onB.waitFor(3)).map((x) => x.id), [c1, c2, c3], 'instance B delivers what was created while away, in order')
  await onB.close()
  await waitForCursor(a.hub.store, { userId: 1, clientId: 'sleepy-pg' }, commandTopic('sleepy-pg'), 'sleepy-pg', c2)

  // Back on A: c1 and c2 were acknowledged on B, c3 was not.
  const backOnA = await connectSleepy(a.mqttUrl!, token, 'sleepy-pg')
  t.same((await backOnA.waitFor(1)).map((x) => x.id), [c3], 'instance A resends only what B did not get acknowledged')
  const c4 = await sendCommand(b.url, token, 'sleepy-pg', 'four')
  t.same((await backOnA.waitFor(2)).map((x) => x.id), [c3, c4], 'and live ones written on the other instance')
  await backOnA.close()
})
