import t from 'tap'
import { createTestApp } from '../fixtures/app.js'
import { call, eventually, listen } from '../fixtures/messaging.js'

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/

// The whole DeviceHive conversation over real sockets, as firmware and a client app run it:
// the device registers and long-polls for commands, the client sends one and waits for its
// result, the device answers, the client's wait ends with the updated command.
t.test('device and client: command round trip asserted field by field', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const network = (await h.request('POST', '/network', { body: { name: 'Plant', description: 'devices of the plant' } })).body.id as number
  const device = await h.createUser({ login: 'firmware-user', networkIds: [network] })
  const client = await h.createUser({ login: 'client-app', networkIds: [network] })

  const registered = await call(`${base}/device/pump-7`, device.accessToken, { method: 'PUT', body: { name: 'Pump 7', networkId: network, data: { model: 'p7' } } })
  t.equal(registered.status, 204)

  const serverTime = (await call(`${base}/info`, client.accessToken)).body.serverTimestamp as string
  const devicePoll = call(`${base}/device/pump-7/command/poll?waitTimeout=30&timestamp=${serverTime}`, device.accessToken)
  await eventually(() => h.hub.router.size >= 1)

  const sent = await call(`${base}/device/pump-7/command`, client.accessToken, { method: 'POST', body: { command: 'start', parameters: { rpm: 1200 }, lifetime: 60 } })
  t.equal(sent.status, 201)
  t.same(Object.keys(sent.body).sort(), ['id', 'lastUpdated', 'timestamp', 'userId'])
  t.equal(sent.body.userId, client.user.id)
  t.match(sent.body.timestamp, TIMESTAMP)

  const received = await devicePoll
  t.equal(received.status, 200)
  t.same(received.body, [{
    id: sent.body.id,
    command: 'start',
    timestamp: sent.body.timestamp,
    lastUpdated: sent.body.timestamp,
    userId: client.user.id,
    deviceId: 'pump-7',
    networkId: network,
    deviceTypeId: 1,
    parameters: { rpm: 1200 },
    lifetime: 60,
    status: null,
    result: null
  }], 'the device receives exactly the command')

  const clientWait = call(`${base}/device/pump-7/command/${sent.body.id}/poll?waitTimeout=30`, client.accessToken)
  await eventually(() => h.hub.router.size >= 1)
  const updated = await call(`${base}/device/pump-7/command/${sent.body.id}`, device.accessToken, { method: 'PUT', body: { status: 'done', result: { rpm: 1190, ok: true } } })
  t.equal(updated.status, 204)

  const result = await clientWait
  t.equal(result.status, 200)
  t.match(result.body.lastUpdated, TIMESTAMP)
  t.ok(result.body.lastUpdated >= result.body.timestamp, 'lastUpdated moves on')
  t.same(result.body, {
    id: sent.body.id,
    command: 'start',
    timestamp: sent.body.timestamp,
    lastUpdated: result.body.lastUpdated,
    userId: client.user.id,
    deviceId: 'pump-7',
    networkId: network,
    deviceTypeId: 1,
    parameters: { rpm: 1200 },
    lifetime: 60,
    status: 'done',
    result: { rpm: 1190, ok: true }
  }, 'the client receives the command after the update')

  // And the device's notification reaches a client polling across all its devices.
  const clientPoll = call(`${base}/device/notification/poll?waitTimeout=30&networkIds=${network}`, client.accessToken)
  await eventually(() => h.hub.router.size >= 1)
  const notified = await call(`${base}/device/pump-7/notification`, device.accessToken, { method: 'POST', body: { notification: 'pressure', parameters: { bar: 2.5 } } })
  t.equal(notified.status, 201)
  const got = await clientPoll
  t.same(got.body, [{ id: notified.body.id, notification: 'pressure', deviceId: 'pump-7', networkId: network, deviceTypeId: 1, timestamp: notified.body.timestamp, parameters: { bar: 2.5 } }])
})
