/**
 * MQTT 5 Receive Maximum on what the server sends (issue #25): a client whose CONNECT says
 * receive maximum 2 never has more than 2 QoS 1 pushes unacknowledged; the next one comes when a
 * PUBACK frees a slot. A raw socket (mqtt-packet) plays the client: it acknowledges when told.
 */
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import mqttPacket from 'mqtt-packet'
import type { IPublishPacket, Packet } from 'mqtt-packet'
import t from 'tap'
import { ADMIN, addDeviceWorld, eventually, startMqttHarness } from '../fixtures/mqtt.js'
import type { TestContext } from '../fixtures/store.js'

interface RawClient {
  socket: Socket
  got: Packet[]
  send(packet: Packet): void
  publishes(): IPublishPacket[]
}

/** A v5 client over a raw socket, CONNACKed with `receiveMaximum`; closed at teardown. */
async function rawClient (t: TestContext, url: string, clientId: string, receiveMaximum: number): Promise<RawClient> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1')
  t.teardown(() => socket.destroy())
  const parser = mqttPacket.parser({ protocolVersion: 5 })
  const got: Packet[] = []
  parser.on('packet', (packet) => got.push(packet))
  socket.on('data', (data) => parser.parse(data))
  socket.on('error', () => undefined)
  await new Promise<void>((resolve) => socket.on('connect', resolve))
  const send = (packet: Packet): void => void socket.write(mqttPacket.generate(packet, { protocolVersion: 5 }))
  send({ cmd: 'connect', protocolVersion: 5, clientId, clean: true, keepalive: 60, username: ADMIN.login, password: Buffer.from(ADMIN.password), properties: { receiveMaximum } })
  await eventually(() => got.some((p) => p.cmd === 'connack'))
  return { socket, got, send, publishes: () => got.filter((p): p is IPublishPacket => p.cmd === 'publish') }
}

const settle = (ms = 400): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

t.test('at most receive maximum QoS 1 pushes await a PUBACK; each PUBACK lets the next one go', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'v5-receive-max')
  const client = await rawClient(t, h.url, `v5-rm-${process.pid}`, 2)
  client.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: `dh/command/+/+/${a.deviceId}/#`, qos: 1 }] })
  await eventually(() => client.got.some((p) => p.cmd === 'suback'))
  const ids: number[] = []
  for (let i = 0; i < 5; i++) ids.push((await h.rest('POST', `/device/${a.deviceId}/command`, { command: `c${i}` })).body.id)
  const commandIds = (): number[] => client.publishes().map((p) => JSON.parse(p.payload.toString()).command.id)

  await eventually(() => client.publishes().length >= 2)
  await settle()
  t.same(commandIds(), ids.slice(0, 2), 'two in flight, not more')
  t.ok(client.publishes().every((p) => p.qos === 1))

  client.send({ cmd: 'puback', messageId: client.publishes()[0]!.messageId })
  await eventually(() => client.publishes().length >= 3)
  await settle()
  t.same(commandIds(), ids.slice(0, 3), 'one PUBACK, one more')

  for (const publish of client.publishes().slice(1)) client.send({ cmd: 'puback', messageId: publish.messageId })
  await eventually(() => client.publishes().length >= 5)
  client.send({ cmd: 'puback', messageId: client.publishes()[3]!.messageId })
  client.send({ cmd: 'puback', messageId: client.publishes()[4]!.messageId })
  t.same(commandIds(), ids, 'all, in order')

  // QoS 0 is not counted: replies come while the window is full.
  client.send({ cmd: 'subscribe', messageId: 2, subscriptions: [{ topic: `dh/response/server/info@v5-rm-${process.pid}`, qos: 0 }] })
  await eventually(() => client.got.filter((p) => p.cmd === 'suback').length >= 2)
  for (let i = 0; i < 2; i++) await h.rest('POST', `/device/${a.deviceId}/command`, { command: `full${i}` })
  await eventually(() => client.publishes().length >= 7)
  await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'held' })
  client.send({ cmd: 'publish', topic: 'dh/request', payload: Buffer.from(JSON.stringify({ action: 'server/info', requestId: 1 })), qos: 0, retain: false, dup: false })
  await eventually(() => client.publishes().some((p) => p.topic.startsWith('dh/response/')))
  await settle()
  t.equal(client.publishes().filter((p) => p.qos === 1).length, 7, 'the third command is held, the QoS 0 reply is not')
})

t.test('a client that holds its PUBACKs past maxBufferedBytes of held pushes: DISCONNECT 0x97', async (t) => {
  const h = await startMqttHarness(t, { maxBufferedBytes: 4096 })
  const a = await addDeviceWorld(h, 'v5-receive-held')
  const client = await rawClient(t, h.url, `v5-rh-${process.pid}`, 1)
  client.send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: `dh/command/+/+/${a.deviceId}/#`, qos: 1 }] })
  await eventually(() => client.got.some((p) => p.cmd === 'suback'))
  const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()))
  for (let i = 0; i < 20; i++) await h.rest('POST', `/device/${a.deviceId}/command`, { command: `c${i}`, parameters: { pad: 'x'.repeat(400) } })
  await closed
  t.equal(client.publishes().length, 1, 'one in flight')
  t.match(client.got.at(-1), { cmd: 'disconnect', reasonCode: 0x97 })
})

t.test('past the server\'s receive maximum in one burst: the PUBRECs of the publishes taken go out before DISCONNECT 0x93', async (t) => {
  const h = await startMqttHarness(t, { maxInflightInbound: 2 })
  const client = await rawClient(t, h.url, `v5-burst-${process.pid}`, 10)
  const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()))
  const qos2 = (messageId: number): Buffer => mqttPacket.generate(
    { cmd: 'publish', topic: 'dh/request', payload: Buffer.from('{}'), qos: 2, messageId, retain: false, dup: false }, { protocolVersion: 5 }
  )
  // One write: the third is read before aedes has answered the first two.
  client.socket.write(Buffer.concat([qos2(1), qos2(2), qos2(3)]))
  await closed
  const answers = client.got.slice(1).map((p) => p.cmd === 'disconnect' ? `disconnect ${p.reasonCode}` : `${p.cmd} ${p.messageId}`)
  t.same(answers, ['pubrec 1', 'pubrec 2', `disconnect ${0x93}`], 'both taken publishes answered, then the DISCONNECT, last')
})
