/**
 * Sleepy devices (issue #25 point 4): a device with a persistent session and a QoS 1 command
 * subscription gets, on reconnect, every command created while it was away, in order; a
 * command it acknowledged is not sent again, one it did not is; expired ones are not sent. Real
 * server, real `mqtt` client, real sockets.
 */
import mqtt from 'mqtt'
import t from 'tap'
import { startServer } from '../../lib/start-server.js'
import type { Test } from 'tap'
import { commandTopic, connectSleepy, rest, sendCommand } from '../fixtures/mqtt-sleepy.js'

async function setup (t: Test, deviceId: string): Promise<{ base: string, url: string, token: string }> {
  const server = await startServer({ port: 0, admin: { password: 'durable-sleepy-pass' }, mqtt: { port: 0 } })
  t.teardown(() => server.close())
  const { accessToken } = await server.adminTokens()
  t.equal((await rest(server.url, accessToken, 'PUT', `/device/${deviceId}`, { name: deviceId })).status, 204)
  return { base: server.url, url: server.mqttUrl!, token: accessToken }
}

t.test('commands created while away arrive on reconnect, in order, acknowledged ones only once', async (t) => {
  const { base, url, token } = await setup(t, 'sleepy-1')
  const first = await connectSleepy(url, token, 'sleepy-1')
  const granted = await first.client.subscribeAsync(commandTopic('sleepy-1'), { qos: 1 })
  t.match(granted, [{ qos: 1 }], 'QoS 1 granted')
  // While connected: delivered live (and acknowledged).
  const live = await sendCommand(base, token, 'sleepy-1', 'live')
  t.same((await first.waitFor(1)).map((c) => c.id), [live])
  await first.close()

  // Away: three commands, one of which will have expired by the time the device wakes up.
  const a = await sendCommand(base, token, 'sleepy-1', 'a')
  await sendCommand(base, token, 'sleepy-1', 'short-lived', { lifetime: 1 })
  const b = await sendCommand(base, token, 'sleepy-1', 'b')
  const c = await sendCommand(base, token, 'sleepy-1', 'c')
  await new Promise((resolve) => setTimeout(resolve, 1500)) // the 1 s lifetime runs out (no assertion on time)

  // Wakes up without subscribing: the session has the subscription. Acknowledges a and b, not c.
  const second = await connectSleepy(url, token, 'sleepy-1', (command) => command.id !== c)
  t.same((await second.waitFor(3)).map((x) => x.id), [a, b, c], 'every command of the time away, in order, none expired')
  await second.close()

  // c was not acknowledged: sent again, alone (a and b were).
  const third = await connectSleepy(url, token, 'sleepy-1')
  t.same((await third.waitFor(1)).map((x) => x.id), [c], 'the unacknowledged command again, the acknowledged ones not')
  // Everything acknowledged now: the next connection gets only what is new.
  const d = await sendCommand(base, token, 'sleepy-1', 'd')
  t.same((await third.waitFor(2)).map((x) => x.id), [c, d])
  await third.close()
  const fourth = await connectSleepy(url, token, 'sleepy-1')
  const e = await sendCommand(base, token, 'sleepy-1', 'e')
  t.same((await fourth.waitFor(1)).map((x) => x.id), [e], 'nothing acknowledged is resent')
  await fourth.close()
})

t.test('a clean session forgets the stored one; unsubscribing stops the resume', async (t) => {
  const { base, url, token } = await setup(t, 'sleepy-2')
  const device = await connectSleepy(url, token, 'sleepy-2')
  await device.client.subscribeAsync(commandTopic('sleepy-2'), { qos: 1 })
  await device.close()
  await sendCommand(base, token, 'sleepy-2', 'missed')
  // A clean connect discards the session: nothing is resumed, then or later.
  const cleanClient = await mqtt.connectAsync(url, { clientId: 'sleepy-2', clean: true, username: 'device', password: token, reconnectPeriod: 0 })
  await cleanClient.endAsync(true)
  const after = await connectSleepy(url, token, 'sleepy-2')
  await after.client.subscribeAsync(commandTopic('sleepy-2'), { qos: 1 })
  const fresh = await sendCommand(base, token, 'sleepy-2', 'fresh')
  t.same((await after.waitFor(1)).map((x) => x.id), [fresh], 'the clean connect dropped the session')
  // Unsubscribed: a later connection resumes nothing for that topic.
  t.equal((await rest(base, token, 'PUT', '/device/other-device', { name: 'other' })).status, 204)
  await after.client.unsubscribeAsync(commandTopic('sleepy-2'))
  await after.client.subscribeAsync('dh/command/+/+/other-device/#', { qos: 1 })
  await after.close()
  await sendCommand(base, token, 'sleepy-2', 'after-unsubscribe')
  const last = await connectSleepy(url, token, 'sleepy-2')
  const other = await sendCommand(base, token, 'other-device', 'marker')
  t.same((await last.waitFor(1)).map((x) => x.id), [other], 'only the topic still subscribed resumes')
  await last.close()
})

t.test('QoS 1 notifications in between: each PUBACK acknowledges its own message, not a command', async (t) => {
  const { base, url, token } = await setup(t, 'sleepy-3')
  const device = await connectSleepy(url, token, 'sleepy-3', (command) => command.command !== 'unacknowledged')
  await device.client.subscribeAsync(commandTopic('sleepy-3'), { qos: 1 })
  await device.client.subscribeAsync('dh/notification/+/+/sleepy-3/#', { qos: 1 })
  const first = await sendCommand(base, token, 'sleepy-3', 'acknowledged')
  await device.waitFor(1)
  const { status } = await rest(base, token, 'POST', '/device/sleepy-3/notification', { notification: 'reading' })
  t.equal(status, 201)
  await eventually(() => device.notifications.length === 1)
  const last = await sendCommand(base, token, 'sleepy-3', 'unacknowledged')
  t.same((await device.waitFor(2)).map((x) => x.id), [first, last])
  await device.close()
  // Had the notification's PUBACK been taken for the last command, it would not come again.
  const again = await connectSleepy(url, token, 'sleepy-3')
  t.same((await again.waitFor(1)).map((x) => x.id), [last], 'the unacknowledged command comes again')
  await again.close()
})

t.test('a persistent session keeps its response topics: a reconnected device gets replies without subscribing again', async (t) => {
  const { url, token } = await setup(t, 'sleepy-4')
  const first = await connectSleepy(url, token, 'sleepy-4')
  await first.client.subscribeAsync('dh/response/server/info@sleepy-4', { qos: 0 })
  await first.close()
  const again = await connectSleepy(url, token, 'sleepy-4')
  const reply = new Promise<{ topic: string, payload: { status?: string, requestId?: string } }>((resolve) => {
    again.client.on('message', (topic, payload) => resolve({ topic, payload: JSON.parse(payload.toString()) }))
  })
  await again.client.publishAsync('dh/request', JSON.stringify({ action: 'server/info', requestId: 'r1' }))
  t.match(await reply, { topic: 'dh/response/server/info@sleepy-4', payload: { status: 'success', requestId: 'r1' } })
  await again.close()
})

t.test('command updates made while away arrive on reconnect, in the order they were made, once each', async (t) => {
  const { base, url, token } = await setup(t, 'sleepy-5')
  const updateTopic = 'dh/command_update/+/+/sleepy-5/#'
  const update = async (id: number, status: string): Promise<void> => {
    t.equal((await rest(base, token, 'PUT', `/device/sleepy-5/command/${id}`, { status })).status, 204)
  }
  const device = await connectSleepy(url, token, 'sleepy-5')
  t.match(await device.client.subscribeAsync(updateTopic, { qos: 1 }), [{ qos: 1 }])
  const c1 = await sendCommand(base, token, 'sleepy-5', 'one')
  await update(c1, 'live')
  t.same((await device.waitFor(1)).map((x) => x.id), [c1], 'a live update, acknowledged')
  await device.close()

  // Away: three commands (inserts are not on this topic), updated in another order.
  const c2 = await sendCommand(base, token, 'sleepy-5', 'two')
  const c3 = await sendCommand(base, token, 'sleepy-5', 'three')
  await update(c3, 'first')
  await update(c1, 'second')
  await update(c2, 'third')
  const second = await connectSleepy(url, token, 'sleepy-5', (command) => command.id !== c2)
  t.same((await second.waitFor(3)).map((x) => x.id), [c3, c1, c2], 'every update of the time away, in update order')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(second.received.length, 3, 'once each')
  await second.close()

  // The last one was not acknowledged: it alone comes again; then a new update, once.
  const third = await connectSleepy(url, token, 'sleepy-5')
  t.same((await third.waitFor(1)).map((x) => x.id), [c2], 'the unacknowledged update again, the acknowledged ones not')
  await update(c3, 'fourth')
  t.same((await third.waitFor(2)).map((x) => x.id), [c2, c3])
  await third.close()
  const fourth = await connectSleepy(url, token, 'sleepy-5')
  const marker = await sendCommand(base, token, 'sleepy-5', 'marker')
  await update(marker, 'marker')
  t.same((await fourth.waitFor(1)).map((x) => x.id), [marker], 'nothing acknowledged is resent')
  await fourth.close()
})

async function eventually (check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
