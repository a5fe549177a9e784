/** MQTT on PostgreSQL: two instances over one database, telemetry in at one, pushed out at the other. */
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'
import { ADMIN, addDeviceWorld, connectMqtt, nextMessage, startMqttHarness } from '../fixtures/mqtt.js'

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
