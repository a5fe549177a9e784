/**
 * MQTT 5 clients (issue #25 point 1) on the same endpoint as 3.1.1 ones, over TCP and WebSocket:
 * real mqtt.js clients with protocolVersion 5, real sockets, a real server.
 */
import { connect } from 'node:net'
import mqtt from 'mqtt'
import type { IClientOptions, IDisconnectPacket, MqttClient } from 'mqtt'
import mqttPacket from 'mqtt-packet'
import type { IConnackPacket, Packet } from 'mqtt-packet'
import t from 'tap'
import { startServer } from '../../lib/start-server.js'
import type { MqttHarness } from '../fixtures/mqtt.js'
import { ADMIN, addDeviceWorld, addUser, closed, connectMqtt, nextMessage, request, startMqttHarness, subscribeGranted } from '../fixtures/mqtt.js'
import { DEEP, MIB, deepFrame, nested, nestedObject } from '../fixtures/hostile-frames.js'

const login = { username: ADMIN.login, password: ADMIN.password }
const v5 = (options: IClientOptions = {}): IClientOptions => ({ protocolVersion: 5, ...options })

/** Resolves with the DISCONNECT the server sends. */
function serverDisconnect (client: MqttClient, timeoutMs = 5000): Promise<IDisconnectPacket> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no DISCONNECT')), timeoutMs)
    client.once('disconnect', (packet) => {
      clearTimeout(timer)
      resolve(packet)
    })
  })
}

const transports: Array<[string, (h: MqttHarness) => string]> = [
  ['TCP', (h) => h.url],
  ['WebSocket', (h) => h.server.mqttWebSocketUrl!]
]

for (const [transport, urlOf] of transports) {
  t.test(`${transport}: login and token at CONNECT, dh/request round trips, CONNACK properties`, async (t) => {
    const h = await startMqttHarness(t, { maxPacketBytes: 4096, maxInflightInbound: 20 })
    const url = urlOf(h)
    const client = await connectMqtt(t, url, v5(login))
    t.equal(client.options.protocolVersion, 5)
    const info = await request(client, { action: 'server/info', requestId: 5 })
    t.match(info, { action: 'server/info', status: 'success', requestId: 5 })
    t.equal((await request(client, { action: 'user/getCurrent' })).current.login, ADMIN.login)
    t.match(await request(client, { action: 'no/such' }), { status: 'error', code: 400 })

    const connack = new Promise<Packet>((resolve) => {
      const probe = mqtt.connect(url, { ...v5({ username: 'token', password: h.adminToken }), clientId: `v5-token-${process.pid}`, reconnectPeriod: 0 })
      t.teardown(() => probe.endAsync(true))
      probe.once('packetreceive', (packet) => resolve(packet))
    })
    t.match(await connack, {
      cmd: 'connack',
      reasonCode: 0,
      properties: { maximumPacketSize: 4096 + 5, receiveMaximum: 20, topicAliasMaximum: 0, subscriptionIdentifiersAvailable: false, sharedSubscriptionAvailable: false }
    }, 'the limits are announced')
  })

  t.test(`${transport}: refusals are MQTT 5 CONNACK reason codes`, async (t) => {
    const h = await startMqttHarness(t, { maxClientIdLength: 20 })
    const url = urlOf(h)
    await t.rejects(connectMqtt(t, url, v5({ username: ADMIN.login, password: 'wrong-password' })), { code: 0x86 }, 'bad user name or password')
    await t.rejects(connectMqtt(t, url, v5({ username: ADMIN.login })), { code: 0x86 }, 'a username without a password')
    await t.rejects(connectMqtt(t, url, v5({ username: 'token', password: 'eyJhbGciOiJIUzI1NiJ9.eyJ4IjoxfQ.bad' })), { code: 0x87 }, 'a bad token: not authorized')
    await t.rejects(connectMqtt(t, url, v5({ ...login, clientId: 'x'.repeat(21) })), { code: 0x85 }, 'client id too long')
    await t.rejects(connectMqtt(t, url, v5({ ...login, properties: { authenticationMethod: 'SCRAM-SHA-1' } })), { code: 0x8c }, 'enhanced authentication: bad authentication method')
    const user = await addUser(h, `v5-erin-${process.pid}-${transport}`, [])
    const holder = await connectMqtt(t, url, v5({ clientId: `v5-held-${transport}`, username: user.login, password: user.password }))
    await t.rejects(connectMqtt(t, url, v5({ ...login, clientId: `v5-held-${transport}` })), { code: 0x85 }, 'a client id held by another user')
    t.ok(holder.connected)
    t.equal((await request(await connectMqtt(t, url, v5(login)), { action: 'server/info' })).status, 'success', 'the server goes on')
  })

  t.test(`${transport}: subscriptions with wildcards, SUBACK and UNSUBACK reason codes, pushes`, async (t) => {
    const h = await startMqttHarness(t)
    const a = await addDeviceWorld(h, `v5-wild-${transport}`)
    const client = await connectMqtt(t, urlOf(h), v5(login))
    const id = client.options.clientId!
    t.same(await subscribeGranted(client, [
      `dh/notification/${a.networkId}/+/${a.deviceId}/temp`, 'dh/command/#', `dh/response/user/get@${id}`,
      'sensors/#', '$share/group/dh/command/#', 'dh/response/user/get@someone-else', 'dh/notification/x/#'
    ]), [0, 0, 0, 0x8f, 0x9e, 0x87, 0x8f])
    const qos1 = await client.subscribeAsync(`dh/command_update/+/${a.deviceTypeId}/#`, { qos: 2 })
    t.same(qos1.map((g) => g.qos), [1], 'QoS 2 asked, 1 granted')

    const notification = nextMessage(client, (topic) => topic.startsWith('dh/notification/'))
    await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'temp', parameters: { c: 21 } })
    const pushed = await notification
    t.equal(pushed.topic, `dh/notification/${a.networkId}/${a.deviceTypeId}/${a.deviceId}/temp`)
    t.match(pushed.payload, { action: 'notification/insert', notification: { parameters: { c: 21 } } })

    const command = nextMessage(client, (topic) => topic.startsWith('dh/command/'))
    const inserted = await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'reboot' })
    t.equal((await command).payload.command.id, inserted.body.id)
    const update = nextMessage(client, (topic) => topic.startsWith('dh/command_update/'))
    await h.rest('PUT', `/device/${a.deviceId}/command/${inserted.body.id}`, { status: 'done' })
    t.equal((await update).payload.command.status, 'done')

    const unsubscribed = new Promise<Packet>((resolve) => client.on('packetreceive', (packet) => { if (packet.cmd === 'unsuback') resolve(packet) }))
    await client.unsubscribeAsync(['dh/command/#', `dh/notification/${a.networkId}/+/${a.deviceId}/temp`])
    t.match(await unsubscribed, { cmd: 'unsuback', granted: [0, 0] }, 'UNSUBACK reason codes: success')
    const seen: string[] = []
    client.on('message', (topic) => seen.push(topic))
    const marker = nextMessage(client, (topic) => topic.startsWith('dh/command_update/'))
    await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'temp' })
    const second = await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'second' })
    await h.rest('PUT', `/device/${a.deviceId}/command/${second.body.id}`, { status: 'done' })
    await marker
    t.same(seen.filter((topic) => !topic.startsWith('dh/command_update/')), [], 'unsubscribed topics are silent')
  })

  t.test(`${transport}: telemetry is stored; a publish outside dh/ is refused in its PUBACK`, async (t) => {
    const h = await startMqttHarness(t)
    const a = await addDeviceWorld(h, `v5-telemetry-${transport}`)
    const client = await connectMqtt(t, urlOf(h), v5(login))
    await client.publishAsync(`dh/notification/${a.networkId}/${a.deviceTypeId}/${a.deviceId}/temp`, JSON.stringify({ c: 7 }), { qos: 1 })
    let list: unknown[] = []
    for (let i = 0; i < 100 && list.length === 0; i++) list = (await h.rest('GET', `/device/${a.deviceId}/notification?notification=temp`)).body
    t.match(list, [{ notification: 'temp', parameters: { c: 7 }, deviceId: a.deviceId }])
    await t.rejects(client.publishAsync('sensors/t1', 'x', { qos: 1 }), { code: 0x87 }, 'PUBACK 0x87 not authorized')
    t.ok(client.connected, 'the connection goes on (MQTT 3.1.1 would close it)')
    t.equal((await request(client, { action: 'server/info' })).status, 'success')
  })
}

t.test('an empty client id gets one assigned, announced in the CONNACK', async (t) => {
  const h = await startMqttHarness(t)
  const client = mqtt.connect(h.url, v5({ ...login, clientId: '', reconnectPeriod: 0 }))
  t.teardown(() => client.endAsync(true))
  const connack = new Promise<Packet>((resolve) => client.once('packetreceive', resolve))
  await new Promise((resolve) => client.once('connect', resolve))
  const assigned = ((await connack) as { properties?: { assignedClientIdentifier?: string } }).properties?.assignedClientIdentifier
  t.match(assigned, /^devicehub-/)
  const reply = nextMessage(client, (topic) => topic === `dh/response/server/info@${assigned}`)
  await client.subscribeAsync(`dh/response/server/info@${assigned}`)
  await client.publishAsync('dh/request', JSON.stringify({ action: 'server/info', requestId: 1 }))
  t.equal((await reply).payload.status, 'success', 'its response topics use the assigned id')
})

/** Commands created while a v5 device was away, on its reconnect (session expiry > 0). */
t.test('a session expiry makes the session persistent: QoS 1 commands created while away arrive on reconnect', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'v5-sleepy')
  const options = v5({ ...login, clientId: `v5-sleepy-${process.pid}`, clean: false, properties: { sessionExpiryInterval: 3600 } })
  const first = mqtt.connect(h.url, { ...options, reconnectPeriod: 0 })
  t.teardown(() => first.endAsync(true))
  const connack = new Promise<Packet>((resolve) => first.once('packetreceive', resolve))
  await new Promise((resolve) => first.once('connect', resolve))
  const properties = (await connack as IConnackPacket).properties
  t.equal(properties?.sessionExpiryInterval, undefined, 'the interval asked for is kept: the CONNACK does not name another')
  await first.subscribeAsync(`dh/command/+/+/${a.deviceId}/#`, { qos: 1 })
  await first.endAsync()
  const ids: number[] = []
  for (const name of ['a', 'b']) ids.push((await h.rest('POST', `/device/${a.deviceId}/command`, { command: name })).body.id)

  const received: number[] = []
  const second = mqtt.connect(h.url, { ...options, reconnectPeriod: 0 })
  t.teardown(() => second.endAsync(true))
  second.on('message', (_topic, payload) => received.push(JSON.parse(payload.toString()).command.id))
  for (let i = 0; i < 250 && received.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(received, ids, 'both, in order, without subscribing again')
  await second.endAsync()

  // A clean start discards the stored session, even with an expiry (which keeps the new one).
  const fresh = await connectMqtt(t, h.url, { ...options, clean: true })
  const seen: string[] = []
  fresh.on('message', (topic) => seen.push(topic))
  await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'c' })
  t.equal((await request(fresh, { action: 'server/info' })).status, 'success')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.same(seen.filter((topic) => topic.startsWith('dh/command/')), [], 'nothing restored after a clean start')
})

/** The session expiry interval is timed from the connection's end; the server's maximum lowers a longer one. */
t.test('a session expires once its client has been away longer than its interval', async (t) => {
  const h = await startMqttHarness(t, { maxSessionExpirySeconds: 60 })
  const a = await addDeviceWorld(h, 'v5-expiry')
  const options = v5({ ...login, clientId: `v5-expiry-${process.pid}`, clean: false, properties: { sessionExpiryInterval: 1 } })
  const connackOf = async (client: MqttClient): Promise<IConnackPacket> => await new Promise((resolve) => client.once('connect', resolve))
  const capped = mqtt.connect(h.url, { ...options, clientId: `v5-capped-${process.pid}`, properties: { sessionExpiryInterval: 3600 }, reconnectPeriod: 0 })
  t.teardown(() => capped.endAsync(true))
  t.equal((await connackOf(capped)).properties?.sessionExpiryInterval, 60, 'the CONNACK names the maximum kept')

  const first = await connectMqtt(t, h.url, options)
  await first.subscribeAsync(`dh/command/+/+/${a.deviceId}/#`, { qos: 1 })
  await first.endAsync()
  await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'while-away' })
  await new Promise((resolve) => setTimeout(resolve, 1300))

  const second = mqtt.connect(h.url, { ...options, reconnectPeriod: 0 })
  t.teardown(() => second.endAsync(true))
  const seen: string[] = []
  second.on('message', (topic) => seen.push(topic))
  t.equal((await connackOf(second)).sessionPresent, false, 'no session present')
  await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'after' })
  t.equal((await request(second, { action: 'server/info' })).status, 'success')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.same(seen.filter((topic) => topic.startsWith('dh/command/')), [], 'no backlog and no subscription: the session expired')

  // Back within the interval: the session (subscription and cursor) is there.
  await second.subscribeAsync(`dh/command/+/+/${a.deviceId}/#`, { qos: 1 })
  await second.endAsync()
  const kept = (await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'kept' })).body.id
  const third = mqtt.connect(h.url, { ...options, reconnectPeriod: 0 })
  t.teardown(() => third.endAsync(true))
  const resumed = nextMessage(third, (topic) => topic.startsWith('dh/command/'))
  t.equal((await resumed).payload.command.id, kept, 'resumed within the interval')
})

/** A device that reconnects while its old connection is still open: the old one's end sets no deadline under the new one. */
t.test('a connection taken over does not expire the session its successor holds', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'v5-takeover-expiry')
  const options = v5({ ...login, clientId: `v5-takeover-expiry-${process.pid}`, clean: false, properties: { sessionExpiryInterval: 1 } })
  const first = await connectMqtt(t, h.url, options)
  await first.subscribeAsync(`dh/command/+/+/${a.deviceId}/#`, { qos: 1 })
  const gone = closed(first)
  const second = await connectMqtt(t, h.url, options)
  await gone
  // Past the interval, still connected: what the periodic prune (of any instance) deletes.
  await new Promise((resolve) => setTimeout(resolve, 1300))
  await h.server.hub.store.mqttSessions.dropExpired(Date.now())
  t.ok(second.connected)
  await second.endAsync()
  const third = mqtt.connect(h.url, { ...options, reconnectPeriod: 0 })
  t.teardown(() => third.endAsync(true))
  const connack = await new Promise<IConnackPacket>((resolve) => third.once('connect', resolve))
  t.equal(connack.sessionPresent, true, 'the session the second connection held is resumed')
  const resumed = nextMessage(third, (topic) => topic.startsWith('dh/command/'))
  const id = (await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'after' })).body.id
  t.equal((await resumed).payload.command.id, id, 'with its subscription')
})

for (const [transport, urlOf] of transports) {
  t.test(`${transport}: a revocation ends the session with DISCONNECT 0x87`, async (t) => {
    const h = await startMqttHarness(t)
    const a = await addDeviceWorld(h, `v5-revoke-${transport}`)
    const user = await addUser(h, `v5-carol-${process.pid}-${transport}`, [a.networkId])
    const client = await connectMqtt(t, urlOf(h), v5({ username: user.login, password: user.password }))
    const other = await connectMqtt(t, urlOf(h), v5(login))
    await client.subscribeAsync('dh/notification/#')
    const disconnect = serverDisconnect(client)
    const gone = closed(client)
    t.equal((await h.rest('DELETE', `/user/${user.id}/network/${a.networkId}`)).status, 204)
    t.match(await disconnect, { cmd: 'disconnect', reasonCode: 0x87 })
    await gone
    t.ok(other.connected, 'another user\'s session goes on')
  })
}

t.test('a server shutdown sends DISCONNECT 0x8B to MQTT 5 clients (TCP and WebSocket)', async (t) => {
  const server = await startServer({ port: 0, admin: { password: ADMIN.password }, mqtt: { port: 0 } })
  const tcp = await connectMqtt(t, server.mqttUrl!, v5(login))
  const ws = await connectMqtt(t, server.mqttWebSocketUrl!, v5(login))
  const farewells = [serverDisconnect(tcp), serverDisconnect(ws)]
  await server.close()
  t.match(await Promise.all(farewells), [{ reasonCode: 0x8b }, { reasonCode: 0x8b }])
})

t.test('an oversized packet: DISCONNECT 0x95, that connection only', async (t) => {
  const h = await startMqttHarness(t, { maxPacketBytes: 1024 })
  const big = await connectMqtt(t, h.url, v5(login))
  const other = await connectMqtt(t, h.url, v5(login))
  const disconnect = serverDisconnect(big)
  big.publish('dh/request', JSON.stringify({ action: 'server/info', pad: 'x'.repeat(2000) }))
  t.match(await disconnect, { reasonCode: 0x95 })
  await closed(big)
  t.equal((await request(other, { action: 'server/info' })).status, 'success')
})

/** Raw MQTT 5 bytes over a socket: what mqtt.js would never send. */
async function rawExchange (port: number, packets: Buffer[], expect: number): Promise<Packet[]> {
  const socket = connect(port, '127.0.0.1')
  const parser = mqttPacket.parser({ protocolVersion: 5 })
  const got: Packet[] = []
  parser.on('packet', (packet) => got.push(packet))
  socket.on('data', (data) => parser.parse(data))
  socket.on('error', () => undefined)
  await new Promise<void>((resolve) => socket.on('connect', resolve))
  // The CONNECT first, the rest once its CONNACK is in.
  socket.write(packets[0]!)
  for (let i = 0; i < 250 && got.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  for (const packet of packets.slice(1)) socket.write(packet)
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 3000)
    socket.on('close', () => { clearTimeout(timer); resolve() })
  })
  socket.destroy()
  if (got.length < expect) throw new Error(`only ${JSON.stringify(got)}`)
  return got
}

t.test('malformed or unsupported MQTT 5 input closes that connection, never the server', async (t) => {
  const h = await startMqttHarness(t)
  const port = Number(new URL(h.url).port)
  const hello = mqttPacket.generate({ cmd: 'connect', protocolVersion: 5, clientId: `v5-raw-${process.pid}`, clean: true, keepalive: 30, username: ADMIN.login, password: Buffer.from(ADMIN.password) }, { protocolVersion: 5 })
  const alias = mqttPacket.generate({ cmd: 'publish', topic: 'dh/request', payload: Buffer.from('{}'), qos: 0, retain: false, dup: false, properties: { topicAlias: 1 } }, { protocolVersion: 5 })
  const answers = await rawExchange(port, [hello, alias], 2)
  t.match(answers, [{ cmd: 'connack', reasonCode: 0 }, { cmd: 'disconnect', reasonCode: 0x94 }], 'a topic alias: DISCONNECT 0x94')
  // A SUBSCRIBE with a property length that runs past the packet.
  const broken = Buffer.from([0x82, 0x04, 0x00, 0x01, 0x7f, 0x00])
  t.match(await rawExchange(port, [hello, broken], 2), [{ cmd: 'connack' }, { cmd: 'disconnect', reasonCode: 0x81 }], 'malformed: DISCONNECT 0x81')
  const auth = mqttPacket.generate({ cmd: 'auth', reasonCode: 0x18, properties: { authenticationMethod: 'x' } }, { protocolVersion: 5 })
  t.match(await rawExchange(port, [hello, auth], 2), [{ cmd: 'connack' }, { cmd: 'disconnect', reasonCode: 0x82 }], 'AUTH: protocol error')
  const client = await connectMqtt(t, h.url, v5(login))
  t.equal((await request(client, { action: 'server/info' })).status, 'success')
})

t.test('where aedes would close in silence, an MQTT 5 client gets a DISCONNECT with the reason first', async (t) => {
  const h = await startMqttHarness(t, { maxInflightInbound: 2 })
  const port = Number(new URL(h.url).port)
  const hello = (keepalive: number): Buffer => mqttPacket.generate({
    cmd: 'connect', protocolVersion: 5, clientId: `v5-silent-${process.pid}-${keepalive}`, clean: true, keepalive, username: ADMIN.login, password: Buffer.from(ADMIN.password)
  }, { protocolVersion: 5 })
  t.match(await rawExchange(port, [hello(1)], 2), [{ cmd: 'connack' }, { cmd: 'disconnect', reasonCode: 0x8d }], 'silent past 1.5 x the keep-alive: 0x8D')

  const qos2 = (messageId: number): Buffer => mqttPacket.generate({ cmd: 'publish', topic: 'dh/request', payload: Buffer.from('{}'), qos: 2, messageId, retain: false, dup: false }, { protocolVersion: 5 })
  // The third comes before aedes answered the first two (their PUBRECs go first: mqtt5-receive-maximum.ts).
  const answers = await rawExchange(port, [hello(30), qos2(1), qos2(2), qos2(3)], 2)
  t.match(answers[0], { cmd: 'connack', properties: { receiveMaximum: 2 } })
  t.match(answers.at(-1), { cmd: 'disconnect', reasonCode: 0x93 }, 'a QoS 2 publish past the receive maximum: 0x93')

  const options = v5({ ...login, clientId: `v5-taken-${process.pid}` })
  const first = await connectMqtt(t, h.url, options)
  const disconnect = serverDisconnect(first)
  const second = await connectMqtt(t, h.url, options)
  t.match(await disconnect, { reasonCode: 0x8e }, 'taken over by the same user: 0x8E')
  t.equal((await request(second, { action: 'server/info' })).status, 'success')
})

t.test('maxKeepAliveSeconds: the CONNACK imposes a server keep alive instead of refusing', async (t) => {
  const h = await startMqttHarness(t, { maxKeepAliveSeconds: 30 })
  for (const keepalive of [0, 600]) {
    const client = mqtt.connect(h.url, v5({ ...login, keepalive, reconnectPeriod: 0 }))
    t.teardown(() => client.endAsync(true))
    const connack = new Promise<Packet>((resolve) => client.once('packetreceive', resolve))
    await new Promise((resolve) => client.once('connect', resolve))
    t.match(await connack, { reasonCode: 0, properties: { serverKeepAlive: 30 } }, `keep-alive ${keepalive}`)
  }
  const within = mqtt.connect(h.url, v5({ ...login, keepalive: 20, reconnectPeriod: 0 }))
  t.teardown(() => within.endAsync(true))
  const connack = new Promise<Packet>((resolve) => within.once('packetreceive', resolve))
  await new Promise((resolve) => within.once('connect', resolve))
  t.notOk((await connack as { properties?: { serverKeepAlive?: number } }).properties?.serverKeepAlive, 'a keep-alive within the limit is the client\'s')
})

t.test('QoS 2 requests; a QoS 2 publish outside dh/ is refused in its PUBREC', async (t) => {
  const h = await startMqttHarness(t)
  const client = await connectMqtt(t, h.url, v5({ username: 'token', password: h.adminToken }))
  const topic = `dh/response/user/getCurrent@${client.options.clientId}`
  await client.subscribeAsync(topic)
  const reply = nextMessage(client, (name) => name === topic)
  await client.publishAsync('dh/request', JSON.stringify({ action: 'user/getCurrent', requestId: 'q2' }), { qos: 2 })
  t.match((await reply).payload, { status: 'success', requestId: 'q2', current: { login: ADMIN.login } })
  await t.rejects(client.publishAsync('elsewhere/x', 'x', { qos: 2 }), { code: 0x87 }, 'PUBREC 0x87 outside dh/')
  t.ok(client.connected)
})

t.test('MQTT 5: hostile frames (deep nesting, ~1 MiB deep) are refused on dh/response/error, the connection goes on', async (t) => {
  const h = await startMqttHarness(t)
  const client = await connectMqtt(t, h.url, v5(login))
  const errors = `dh/response/error@${client.options.clientId}`
  await client.subscribeAsync(errors)
  const frames = [
    `{"action":${nested(DEEP)}}`,
    `{"action":"server/info","requestId":${nestedObject(DEEP)}}`,
    deepFrame('{"action":"server/info","x":', '}', MIB - 1024)
  ]
  for (const frame of frames) {
    const reply = nextMessage(client, (topic) => topic === errors, 20_000)
    await client.publishAsync('dh/request', frame)
    t.match((await reply).payload, { status: 'error', code: 400, error: /nested too deeply/ }, `${frame.length} bytes`)
  }
  t.equal((await request(client, { action: 'server/info' })).status, 'success')
})
