/**
 * Topic subscriptions (issue #25 points 2, 3): `dh/notification|command|command_update/...` with
 * `+` and `#` become core subscriptions of the client's own scope, pushed to that client alone.
 */
import t from 'tap'
import { ADMIN, addDeviceWorld, addUser, closed, collect, connectMqtt, nextMessage, request, startMqttHarness, subscribeGranted } from '../fixtures/mqtt.js'

t.test('+ and # wildcards; the pushed topic and payload are DeviceHive\'s', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'wild')
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  const granted = await client.subscribeAsync([`dh/notification/${a.networkId}/+/${a.deviceId}/temp`, 'dh/command/#', `dh/command_update/+/${a.deviceTypeId}/#`])
  t.same(granted.map((g) => g.qos), [0, 0, 0])

  const notification = nextMessage(client, (topic) => topic.startsWith('dh/notification/'))
  await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'temp', parameters: { c: 21 } })
  const pushed = await notification
  t.equal(pushed.topic, `dh/notification/${a.networkId}/${a.deviceTypeId}/${a.deviceId}/temp`)
  t.equal(pushed.payload.action, 'notification/insert')
  t.same(pushed.payload.notification.parameters, { c: 21 })
  t.type(pushed.payload.subscriptionId, 'number')

  const command = nextMessage(client, (topic) => topic.startsWith('dh/command/'))
  const inserted = await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'reboot' })
  const commandPush = await command
  t.equal(commandPush.topic, `dh/command/${a.networkId}/${a.deviceTypeId}/${a.deviceId}/reboot`)
  t.equal(commandPush.payload.action, 'command/insert')
  t.equal(commandPush.payload.command.id, inserted.body.id)

  const update = nextMessage(client, (topic) => topic.startsWith('dh/command_update/'))
  await h.rest('PUT', `/device/${a.deviceId}/command/${inserted.body.id}`, { status: 'done', result: { ok: true } })
  const updatePush = await update
  t.equal(updatePush.topic, `dh/command_update/${a.networkId}/${a.deviceTypeId}/${a.deviceId}/reboot`)
  t.equal(updatePush.payload.action, 'command/update')
  t.equal(updatePush.payload.command.status, 'done')
})

t.test('a subscription asking QoS 2 is granted 1, the QoS its pushes use', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'qos2')
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  const granted = await client.subscribeAsync({ [`dh/command/+/+/${a.deviceId}/#`]: { qos: 2 }, 'dh/command_update/#': { qos: 1 }, 'dh/notification/#': { qos: 0 } })
  t.same(granted.map((g) => g.qos), [1, 1, 0], 'SUBACK: QoS 2 asked, 1 granted')
  const delivered = new Promise<number>((resolve) => client.once('message', (_topic, _payload, packet) => resolve(packet.qos)))
  await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'reboot' })
  t.equal(await delivered, 1, 'the push comes with QoS 1')
})

t.test('two users on overlapping topics each get their own scope only', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'iso-a')
  const b = await addDeviceWorld(h, 'iso-b')
  const userA = await addUser(h, `alice-${process.pid}`, [a.networkId])
  const userB = await addUser(h, `bob-${process.pid}`, [b.networkId])
  const clientA = await connectMqtt(t, h.url, { username: userA.login, password: userA.password })
  const clientB = await connectMqtt(t, h.url, { username: userB.login, password: userB.password })
  const seenA = collect(clientA)
  const seenB = collect(clientB)
  for (const client of [clientA, clientB]) await client.subscribeAsync(['dh/notification/#', 'dh/notification/+/+/+/temp'])

  const gotA = nextMessage(clientA, (topic) => topic.includes(a.deviceId))
  await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'temp' })
  const gotB = nextMessage(clientB, (topic) => topic.includes(b.deviceId))
  await h.rest('POST', `/device/${b.deviceId}/notification`, { notification: 'temp' })
  await gotA
  await gotB
  // A marker after them on each user's own device: what came before it has come.
  const markerA = nextMessage(clientA, (topic) => topic.endsWith('/marker'))
  const markerB = nextMessage(clientB, (topic) => topic.endsWith('/marker'))
  await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'marker' })
  await h.rest('POST', `/device/${b.deviceId}/notification`, { notification: 'marker' })
  await markerA
  await markerB
  t.notOk(seenA.some((m) => m.topic.includes(b.deviceId)), 'A never sees B\'s device')
  t.notOk(seenB.some((m) => m.topic.includes(a.deviceId)), 'B never sees A\'s device')
  t.equal(seenA.filter((m) => m.topic.endsWith(`${a.deviceId}/temp`)).length, 1, 'two matching filters of one client: one push (MQTT-3.3.5-1)')
  t.equal(seenB.filter((m) => m.topic.endsWith(`${b.deviceId}/temp`)).length, 1)
})

t.test('unsubscribing one topic keeps the others', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'unsub')
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  await client.subscribeAsync([`dh/notification/+/+/${a.deviceId}/temp`, `dh/notification/+/+/${a.deviceId}/hum`])
  await client.unsubscribeAsync(`dh/notification/+/+/${a.deviceId}/temp`)
  const seen = collect(client)
  const hum = nextMessage(client, (topic) => topic.endsWith('/hum'))
  await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'temp' })
  await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'hum' })
  await hum
  t.notOk(seen.some((m) => m.topic.endsWith('/temp')), 'the unsubscribed topic is silent')
})

t.test('a revocation ends the client\'s session: the server disconnects it', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'revoke')
  const user = await addUser(h, `carol-${process.pid}`, [a.networkId])
  const client = await connectMqtt(t, h.url, { username: user.login, password: user.password })
  const other = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  await client.subscribeAsync('dh/notification/#')
  await other.subscribeAsync('dh/notification/#')
  const gone = closed(client)
  const unassigned = await h.rest('DELETE', `/user/${user.id}/network/${a.networkId}`)
  t.equal(unassigned.status, 204)
  await gone
  t.notOk(client.connected)
  // Another user's session goes on.
  const still = nextMessage(other, (topic) => topic.includes(a.deviceId))
  await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'after' })
  await still
  t.ok(other.connected)
})

t.test('a device-scoped token receives and publishes only within its device\'s scope', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'scope-a')
  const b = await addDeviceWorld(h, 'scope-b')
  const minted = await h.rest('POST', '/token/create', {
    userId: 1,
    actions: ['GetDevice', 'RegisterDevice', 'GetDeviceCommand', 'UpdateDeviceCommand', 'GetDeviceNotification', 'CreateDeviceNotification'],
    networkIds: [String(a.networkId)],
    deviceTypeIds: [String(a.deviceTypeId)]
  })
  const device = await connectMqtt(t, h.url, { username: 'device', password: minted.body.accessToken })
  const granted = await subscribeGranted(device, [`dh/command/+/+/${b.deviceId}/#`, 'dh/command/#', `dh/response/notification/insert@${device.options.clientId}`])
  t.same(granted, [128, 0, 0], 'another device\'s topic is refused in the SUBACK')
  const seen = collect(device)
  const own = nextMessage(device, (topic) => topic.startsWith('dh/command/'))
  await h.rest('POST', `/device/${b.deviceId}/command`, { command: 'not-yours' })
  await h.rest('POST', `/device/${a.deviceId}/command`, { command: 'yours' })
  t.equal((await own).payload.command.command, 'yours')
  t.notOk(seen.some((m) => m.topic.includes(b.deviceId)))

  const refused = nextMessage(device, (topic) => topic.startsWith('dh/response/notification/insert'))
  await device.publishAsync(`dh/notification/${b.networkId}/${b.deviceTypeId}/${b.deviceId}/temp`, JSON.stringify({ c: 1 }))
  t.equal((await refused).payload.status, 'error')
  await device.publishAsync(`dh/notification/${a.networkId}/${a.deviceTypeId}/${a.deviceId}/temp`, JSON.stringify({ c: 2 }))
  const stored = async (deviceId: string): Promise<unknown[]> => (await h.rest('GET', `/device/${deviceId}/notification?notification=temp`)).body
  let list: unknown[] = []
  for (let i = 0; i < 100 && list.length === 0; i++) list = await stored(a.deviceId)
  t.match(list, [{ notification: 'temp', parameters: { c: 2 }, deviceId: a.deviceId }], 'telemetry stored like a REST insert')
  t.same(await stored(b.deviceId), [], 'nothing stored for the other device')
})

t.test('subscribe actions on dh/request: pushes on the message topics, subscription/list, unsubscribe', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'request-sub')
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  const subscribed = await request(client, { action: 'notification/subscribe', deviceId: a.deviceId, names: ['temp'] })
  t.equal(subscribed.status, 'success')
  const pushed = nextMessage(client, (topic) => topic.startsWith('dh/notification/'))
  await h.rest('POST', `/device/${a.deviceId}/notification`, { notification: 'temp' })
  const push = await pushed
  t.equal(push.topic, `dh/notification/${a.networkId}/${a.deviceTypeId}/${a.deviceId}/temp`)
  t.equal(push.payload.subscriptionId, subscribed.subscriptionId)
  const listed = await request(client, { action: 'subscription/list' })
  t.match(listed.subscriptions, [{ subscriptionId: subscribed.subscriptionId, type: 'notification', deviceId: a.deviceId, names: ['temp'] }])
  t.equal((await request(client, { action: 'notification/unsubscribe', subscriptionId: subscribed.subscriptionId })).status, 'success')
  t.same((await request(client, { action: 'subscription/list' })).subscriptions, [])
  t.match(await request(client, { action: 'notification/unsubscribe', subscriptionId: subscribed.subscriptionId }), { status: 'error', code: 404 })
})

t.test('a command round trip between a client and a device, both over MQTT', async (t) => {
  const h = await startMqttHarness(t)
  const a = await addDeviceWorld(h, 'roundtrip')
  const minted = await h.rest('POST', '/token/create', {
    userId: 1, actions: ['GetDeviceCommand', 'UpdateDeviceCommand'], networkIds: [String(a.networkId)], deviceTypeIds: [String(a.deviceTypeId)]
  })
  const device = await connectMqtt(t, h.url, { username: a.deviceId, password: minted.body.accessToken })
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  await device.subscribeAsync(`dh/command/+/+/${a.deviceId}/#`)
  await client.subscribeAsync(`dh/command_update/+/+/${a.deviceId}/#`)
  const received = nextMessage(device, (topic) => topic.startsWith('dh/command/'))
  const inserted = await request(client, { action: 'command/insert', deviceId: a.deviceId, command: { command: 'on', parameters: { level: 3 } } })
  t.equal(inserted.status, 'success')
  const command = (await received).payload.command
  t.match(command, { id: inserted.command.id, command: 'on', parameters: { level: 3 } })
  const updated = nextMessage(client, (topic) => topic.startsWith('dh/command_update/'))
  const answer = await request(device, { action: 'command/update', deviceId: a.deviceId, commandId: command.id, command: { status: 'done', result: { lit: true } } })
  t.equal(answer.status, 'success')
  t.match((await updated).payload.command, { id: command.id, status: 'done', result: { lit: true } })
})
