/** Limits and bad input on the MQTT endpoint (issue #25 point 6): each refused, never a crash. */
import { connect, createServer } from 'node:net'
import type { AddressInfo, Server } from 'node:net'
import t from 'tap'
import { startServer } from '../../lib/start-server.js'
import { DEEP, MIB, deepFrame, nested, nestedObject } from '../fixtures/hostile-frames.js'
import { ADMIN, addDeviceWorld, closed, connectMqtt, eventually, nextMessage, request, startMqttHarness, subscribeGranted } from '../fixtures/mqtt.js'

const login = { username: ADMIN.login, password: ADMIN.password }

t.test('an oversized packet closes that connection only', async (t) => {
  const h = await startMqttHarness(t, { maxPacketBytes: 1024 })
  const big = await connectMqtt(t, h.url, login)
  const other = await connectMqtt(t, h.url, login)
  const gone = closed(big)
  big.publish('dh/request', JSON.stringify({ action: 'server/info', pad: 'x'.repeat(2000) }))
  await gone
  t.equal((await request(other, { action: 'server/info' })).status, 'success')
})

t.test('topics per client are capped: one more is refused in the SUBACK', async (t) => {
  const h = await startMqttHarness(t, { maxSubscriptions: 2 })
  const client = await connectMqtt(t, h.url, login)
  t.same(await subscribeGranted(client, ['dh/notification/#', 'dh/command/#', 'dh/command_update/#']), [0, 0, 128])
  t.same(await subscribeGranted(client, ['dh/notification/#']), [0], 'a topic already held is not one more')
})

t.test('bad JSON, deep JSON and non-objects are answered on dh/response/error@<clientId>', async (t) => {
  const h = await startMqttHarness(t)
  const client = await connectMqtt(t, h.url, login)
  const errors = `dh/response/error@${client.options.clientId}`
  await client.subscribeAsync(errors)
  const cases: Array<[string, RegExp]> = [
    ['{"action": "server/info"', /Malformed Json/],
    ['['.repeat(5000) + ']'.repeat(5000), /nested too deeply/],
    ['[1, 2]', /Malformed Json/],
    ['"text"', /Malformed Json/],
    ['{"requestId": 1}', /action/]
  ]
  for (const [payload, error] of cases) {
    const reply = nextMessage(client, (topic) => topic === errors)
    await client.publishAsync('dh/request', payload)
    const { payload: body } = await reply
    t.match(body, { status: 'error', code: 400, error }, payload.slice(0, 30))
  }
  const telemetry = `dh/response/notification/insert@${client.options.clientId}`
  await client.subscribeAsync(telemetry)
  const refused = nextMessage(client, (topic) => topic === telemetry)
  await client.publishAsync('dh/notification/1/1/some-device/temp', '{"bad json')
  t.match((await refused).payload, { status: 'error', code: 400 })
  const misplaced = nextMessage(client, (topic) => topic === telemetry)
  await client.publishAsync('dh/notification/some-device', '{}')
  t.match((await misplaced).payload, { status: 'error', code: 400, error: /dh\/notification\/<networkId>/ })
  t.ok(client.connected)
})

t.test('hostile frames (deep nesting in every member, ~1 MiB deep): refused on dh/response/error, the connection goes on', async (t) => {
  const h = await startMqttHarness(t)
  const client = await connectMqtt(t, h.url, login)
  const errors = `dh/response/error@${client.options.clientId}`
  await client.subscribeAsync(errors)
  const frames = [
    `{"action":${nested(DEEP)}}`,
    `{"action":"server/info","requestId":${nestedObject(DEEP)}}`,
    `{"action":"notification/insert","deviceId":"x","notification":{"notification":"n","parameters":${nested(DEEP)}}}`,
    deepFrame('{"action":"server/info","x":', '}', MIB - 1024)
  ]
  for (const frame of frames) {
    const reply = nextMessage(client, (topic) => topic === errors, 20_000)
    await client.publishAsync('dh/request', frame)
    t.match((await reply).payload, { status: 'error', code: 400, error: /nested too deeply/ }, `${frame.length} bytes`)
  }
  t.equal((await request(client, { action: 'server/info' })).status, 'success')
})

t.test('an anonymous client that never authenticates is disconnected', async (t) => {
  const h = await startMqttHarness(t, { authTimeoutMs: 300 })
  const anonymous = await connectMqtt(t, h.url)
  const authenticated = await connectMqtt(t, h.url, login)
  await closed(anonymous)
  t.ok(authenticated.connected)
})

t.test('requests queued past the cap close the connection', async (t) => {
  const h = await startMqttHarness(t, { maxPendingRequests: 3 })
  const client = await connectMqtt(t, h.url, login)
  const gone = closed(client)
  for (let i = 0; i < 50; i++) client.publish('dh/request', JSON.stringify({ action: 'network/list', requestId: i }))
  await gone
  t.notOk(client.connected)
})

t.test('garbage on the socket closes it; the server goes on', async (t) => {
  const h = await startMqttHarness(t)
  const port = Number(new URL(h.url).port)
  for (const bytes of [Buffer.from('GET / HTTP/1.1\r\n\r\n'), Buffer.from([0x10, 0xff, 0xff, 0xff, 0xff, 0x01]), Buffer.from([0x30, 0x02, 0x00, 0x00])]) {
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => {
      socket.on('error', () => undefined)
      socket.on('close', () => resolve())
      socket.on('connect', () => socket.write(bytes))
    })
  }
  const client = await connectMqtt(t, h.url, login)
  t.equal((await request(client, { action: 'server/info' })).status, 'success')
})

async function listenOn (port: number): Promise<Server | undefined> {
  const server = createServer()
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined))
    server.listen(port, '127.0.0.1', () => resolve(server))
  })
}

t.test('a busy default port is a warning (MQTT over WebSocket stays); a busy chosen port is an error', async (t) => {
  // 1883 is the default: on this machine another broker holds it; elsewhere the test holds it.
  const holder = await listenOn(1883)
  t.teardown(() => holder?.close())
  const server = await startServer({ port: 0, admin: { password: ADMIN.password }, mqtt: { host: '127.0.0.1' } })
  t.teardown(() => server.close())
  t.equal(server.mqttUrl, undefined)
  t.match(server.warnings, [/MQTT port 1883 \(the default\) is in use/])
  const client = await connectMqtt(t, server.mqttWebSocketUrl!, login)
  t.equal((await request(client, { action: 'server/info' })).status, 'success')

  const taken = (await listenOn(0))!
  t.teardown(() => taken.close())
  const port = (taken.address() as AddressInfo).port
  await t.rejects(startServer({ port: 0, admin: { password: ADMIN.password }, mqtt: { port } }), { message: new RegExp(`MQTT port ${port} is in use`) })
})

t.test('shutdown disconnects every MQTT client', async (t) => {
  const server = await startServer({ port: 0, admin: { password: ADMIN.password }, mqtt: { port: 0 } })
  const client = await connectMqtt(t, server.mqttUrl!, login)
  await client.subscribeAsync('dh/notification/#')
  const gone = closed(client)
  await server.close()
  await gone
  t.notOk(client.connected)
})

t.test('many QoS 1 telemetry publishes in flight: every one is acknowledged and stored, the connection stays alive', async (t) => {
  const h = await startMqttHarness(t)
  const { networkId, deviceTypeId, deviceId } = await addDeviceWorld(h, 'burst')
  const client = await connectMqtt(t, h.url, login)
  const count = 600
  // Fired without waiting: the server's request queue fills past its high-water mark and reading
  // pauses (backpressure), then resumes as it drains.
  await Promise.all(Array.from({ length: count }, (_, i) =>
    client.publishAsync(`dh/notification/${networkId}/${deviceTypeId}/${deviceId}/burst`, JSON.stringify({ i }), { qos: 1 })))
  t.equal((await request(client, { action: 'server/info' })).status, 'success', 'still answering after the burst')
  await eventually(async () => (await h.rest('GET', `/device/${deviceId}/notification?notification=burst&take=1000`)).body.length >= count, 10_000)
  t.pass(`${count} stored`)
})
