/** Start, persistent sessions and the test rig's MQTT URL (issue #25 point 1). */
import Fastify from 'fastify'
import t from 'tap'
import { createDeviceHub } from '../../lib/core/devicehub.js'
import { createMqttServer } from '../../lib/mqtt/mqtt-server.js'
import { openStore } from '../../lib/store/open-store.js'
import { startServer } from '../../lib/start-server.js'
import { createTestRig } from '../../lib/testing/index.js'
import { ADMIN, closed, connectMqtt, eventually, nextMessage, request, startMqttHarness } from '../fixtures/mqtt.js'

t.test('no CONNACK before the hub is initialised; then the first admin can log in', async (t) => {
  const store = await openStore(':memory:')
  const hub = await createDeviceHub({ store, deferBootstrap: true, admin: { password: ADMIN.password } })
  t.teardown(() => hub.close())
  const mqtt = await createMqttServer({ hub, logger: Fastify({ logger: false }).log, restServerUrl: () => 'http://127.0.0.1/api/rest' })
  t.teardown(() => mqtt.close())
  const { port } = await mqtt.listen(0, '127.0.0.1')
  let connected = false
  const connecting = connectMqtt(t, `mqtt://127.0.0.1:${port}`, { username: ADMIN.login, password: ADMIN.password })
    .then((client) => { connected = true; return client })
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.notOk(connected, 'no CONNACK yet: the admin does not exist yet')
  await hub.initialise()
  const client = await connecting
  t.equal((await request(client, { action: 'user/getCurrent' })).current.login, ADMIN.login)
})

t.test('a persistent session\'s subscriptions are restored on reconnect and push again', async (t) => {
  const h = await startMqttHarness(t)
  const deviceId = `persist-${process.pid}`
  await h.rest('PUT', `/device/${deviceId}`, { name: deviceId })
  const options = { clientId: `persistent-${process.pid}`, clean: false, username: ADMIN.login, password: ADMIN.password }
  const first = await connectMqtt(t, h.url, options)
  await first.subscribeAsync(`dh/notification/+/+/${deviceId}/#`, { qos: 1 })
  await first.endAsync()
  const second = await connectMqtt(t, h.url, options)
  const pushed = nextMessage(second, (topic) => topic.includes(deviceId))
  // The restored subscription starts after the CONNACK: retry the insert until it is live.
  let received = false
  void pushed.then(() => { received = true }, () => undefined)
  await eventually(async () => {
    if (!received) await h.rest('POST', `/device/${deviceId}/notification`, { notification: 'back' })
    return received
  })
  t.equal((await pushed).payload.notification.notification, 'back')
})

t.test('the test rig has an MQTT URL; a device handle\'s token works over it', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  t.match(rig.mqttUrl, /^mqtt:\/\/127\.0\.0\.1:\d+$/)
  t.match(rig.mqttWebSocketUrl, /^ws:\/\/127\.0\.0\.1:\d+\/mqtt$/)
  const lamp = await rig.device('mqtt-lamp')
  const client = await connectMqtt(t, rig.mqttUrl, { username: 'mqtt-lamp', password: lamp.accessToken })
  await client.subscribeAsync('dh/command/+/+/mqtt-lamp/#')
  const command = nextMessage(client, (topic) => topic.startsWith('dh/command/'))
  await rig.admin.request('POST', '/device/mqtt-lamp/command', { body: { command: 'blink' } })
  t.equal((await command).payload.command.command, 'blink')
})

t.test('/metrics counts MQTT clients and subscriptions', async (t) => {
  const server = await startServer({ port: 0, admin: { password: ADMIN.password }, metrics: true, mqtt: { port: 0 } })
  t.teardown(() => server.close())
  const scrape = async (): Promise<string> => (await fetch(`${new URL(server.url).origin}/metrics`)).text()
  t.match(await scrape(), /devicehub_mqtt_clients 0\n[\s\S]*devicehub_mqtt_subscriptions 0\n/)
  const client = await connectMqtt(t, server.mqttUrl!, { username: ADMIN.login, password: ADMIN.password })
  await client.subscribeAsync(['dh/notification/#', 'dh/command/#'])
  const text = await scrape()
  t.match(text, /devicehub_mqtt_clients 1\n/)
  t.match(text, /devicehub_mqtt_subscriptions 2\n/)
  const gone = closed(client)
  client.end(true)
  await gone
  await eventually(async () => /devicehub_mqtt_clients 0\n[\s\S]*devicehub_mqtt_subscriptions 0\n/.test(await scrape()))
  t.pass('a closed client is no longer counted')
})

t.test('webSocketPath: false serves MQTT over TCP only', async (t) => {
  const server = await startServer({ port: 0, admin: { password: ADMIN.password }, mqtt: { port: 0, webSocketPath: false } })
  t.teardown(() => server.close())
  t.equal(server.mqttWebSocketUrl, undefined)
  t.match(server.mqttUrl, /^mqtt:\/\//)
  t.equal((await fetch(`http://127.0.0.1:${server.port}/mqtt`)).status, 404, 'no /mqtt route')
})
