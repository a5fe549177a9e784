/** MQTT on PostgreSQL: two instances over one database, telemetry in at one, pushed out at the other. */
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'
import { ADMIN, addDeviceWorld, connectMqtt, nextMessage, request, startMqttHarness } from '../fixtures/mqtt.js'

postgresTest('a device publishes to instance A; a client subscribed at instance B gets it', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const a = await startMqttHarness(t, {}, db)
  const b = await startMqttHarness(t, {}, db)
  const world = await addDeviceWorld(a, 'pg')
  const client = await connectMqtt(t, b.url, { username: ADMIN.login, password: ADMIN.password })
  await client.subscribeAsync(`dh/notification/${world.networkId}/#`)
  const device = await connectMqtt(t, a.url, { username: ADMIN.login, password: ADMIN.password })
  const pushed = nextMessage(client, (topic) => topic.endsWith(`/${world.deviceId}/temp`), 15_000)
  await device.publishAsync(`dh/notification/${world.networkId}/${world.deviceTypeId}/${world.deviceId}/temp`, JSON.stringify({ c: 7 }))
  t.same((await pushed).payload.notification.parameters, { c: 7 })
})

postgresTest('command/update over MQTT replaces the parameters (one batched statement on PostgreSQL); REST does not', async (t, adminUrl) => {
  const h = await startMqttHarness(t, {}, await createTestDatabase(t, adminUrl))
  const world = await addDeviceWorld(h, 'pg-params')
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  const get = async (): Promise<{ parameters: unknown, status: unknown }> => (await request(client, { action: 'command/get', deviceId: world.deviceId, commandId: id })).command
  const inserted = await request(client, { action: 'command/insert', deviceId: world.deviceId, command: { command: 'set', parameters: { level: 1 } } })
  const id = inserted.command.id
  t.equal((await request(client, { action: 'command/update', deviceId: world.deviceId, commandId: id, command: { parameters: { level: 2 }, status: 'done' } })).status, 'success')
  t.match(await get(), { parameters: { level: 2 }, status: 'done' })
  await request(client, { action: 'command/update', deviceId: world.deviceId, commandId: id, command: { parameters: null } })
  t.equal((await get()).parameters, null, 'null clears them')
  t.equal((await h.rest('PUT', `/device/${world.deviceId}/command/${id}`, { parameters: { level: 3 } })).status, 204)
  t.equal((await get()).parameters, null, 'REST reads status and result only')
})
