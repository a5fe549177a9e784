import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, tokenWithActions } from '../../fixtures/messaging.js'

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/

t.test('POST /device/{id}/notification answers {id, timestamp}; GET returns the full view', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h, undefined, { isBlocked: true })
  const res = await h.request('POST', `/device/${device}/notification`, { body: { notification: 'temperature', parameters: { z: 1, a: 2 }, id: 5, networkId: 9 } })
  t.equal(res.status, 201)
  t.same(Object.keys(res.body).sort(), ['id', 'timestamp'], 'no notification field in the insert view')
  t.match(res.body.timestamp, TS)
  const got = await h.request('GET', `/device/${device}/notification/${res.body.id}`)
  t.equal(got.status, 200)
  t.same(got.body, { id: res.body.id, notification: 'temperature', deviceId: device, networkId: 1, deviceTypeId: 1, timestamp: res.body.timestamp, parameters: { z: 1, a: 2 } })
  t.same(Object.keys(got.body.parameters), ['z', 'a'])

  // A client's own `new Date()` (a few ms behind the server) is kept, as DeviceHive's tests expect (issue #23).
  // Past the first insert's stamp first: a hint at or before the last stamp drawn gives way to it.
  await new Promise((resolve) => setTimeout(resolve, 100))
  const sent = new Date(Date.now() - 20).toISOString()
  const given = await h.request('POST', `/device/${device}/notification`, { body: { notification: 'n', timestamp: sent, parameters: null } })
  t.equal(given.body.timestamp, sent.slice(0, -1), 'a client timestamp just behind the server is kept')
  t.equal((await h.request('GET', `/device/${device}/notification/${given.body.id}`)).body.parameters, null)
})

t.test('POST errors, in Java\'s check order', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const post = (body: unknown, token?: string | null, id = device): ReturnType<typeof h.request> =>
    h.request('POST', `/device/${id}/notification`, { body, token })
  t.same((await post({ notification: 'n' }, null)).body, { error: 401, message: 'Unauthorized' })
  t.same((await post({ notification: 'n' }, tokenWithActions(h, [Action.GetDeviceNotification]))).body, { error: 403, message: 'Access is denied' })
  t.same((await h.request('POST', `/device/${device}/notification`)).body, { error: 400, message: 'Error! Validation failed: Object is null' })
  t.same((await post({ notification2: 'n' })).body, { error: 400, message: 'Invalid request parameters' })
  t.same((await post({ notification: 'n', parameters: 'x' })).body, { error: 400, message: "'parameters' must be JSON Object!" })
  t.same((await post({ notification: 'n', timestamp: 'later' })).body, { error: 400, message: 'Invalid request parameters' })
  const special = { error: 403, message: 'It\'s forbidden to insert these special notifications: $device-update, $device-add.' }
  t.same((await post({ notification: '$device-add' })).body, special)
  t.same((await post({ notification: '$device-update' }, undefined, 'no-such-device')).body, special, 'the name is checked before the device')
  t.same((await post({ notification: 'n' }, undefined, 'no-such-device')).body, { error: 404, message: 'Device with such deviceId = no-such-device not found' })
  await h.store.networks.insert({ name: 'Other', description: null })
  const client = await h.createUser({ networkIds: [2] })
  t.same((await post({ notification: 'n' }, client.accessToken)).body, { error: 403, message: 'Access is denied' }, 'D7: restricted token')
  t.same((await post({ notification: 'n' }, client.accessToken, 'no-such-device')).body, { error: 403, message: 'Access is denied' }, 'D7: missing alike')
  t.same((await h.request('GET', `/device/${device}/notification`)).body, [])
  t.same((await h.request('PUT', `/device/${device}/notification/1`, { body: {} })).body, { error: 405, message: 'HTTP 405 Method Not Allowed' })
})

t.test('GET /device/{id}/notification: newest first, $device-* included, filters', async (t) => {
  let now = Date.UTC(2020, 0, 1, 9)
  const h = await createTestApp(t, { clock: { now: () => now }, tokenLifetimes: { accessMs: 86_400_000 } })
  const device = await addDevice(h)
  const other = await addDevice(h)
  const hub = h.hub
  const system = await hub.log.append({ kind: 'notification', input: { notification: '$device-add', deviceId: device, networkId: 1, deviceTypeId: 1, parameters: { id: device } } })
  // Each stored at the time it names: a client's timestamp is kept when the server clock can take it (issue #23).
  const insert = async (notification: string, timestamp: string): Promise<number> => {
    now = Date.parse(`${timestamp}Z`)
    return (await h.request('POST', `/device/${device}/notification`, { body: { notification, timestamp } })).body.id
  }
  const a = await insert('temp', '2020-01-01T10:00:00.000')
  const b = await insert('humidity', '2020-01-01T11:00:00.000')
  await h.request('POST', `/device/${other}/notification`, { body: { notification: 'temp' } })
  const ids = async (query: Record<string, string | number>): Promise<number[]> => {
    const res = await h.request('GET', `/device/${device}/notification`, { query })
    t.equal(res.status, 200)
    return res.body.map((x: { id: number }) => x.id)
  }
  t.same(await ids({}), [b, a, system.id])
  t.same(await ids({ notification: 'temp' }), [a])
  t.same(await ids({ start: '2020-01-01T10:00:00', end: '2020-01-01T10:30:00' }), [a])
  t.same(await ids({ sortField: 'notification', sortOrder: 'ASC' }), [system.id, b, a])
  t.same(await ids({ take: 2, skip: 1 }), [a, system.id])
  t.same((await h.request('GET', `/device/${device}/notification`, { query: { end: '2020-13-45' } })).body, { error: 400, message: 'Unparseable timestamp' })
})

t.test('GET /device/{id}/notification/{id} not found', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const other = await addDevice(h)
  const id = (await h.request('POST', `/device/${other}/notification`, { body: { notification: 'n' } })).body.id
  const notFound = { error: 404, message: 'Requested notification not found' }
  t.same((await h.request('GET', `/device/${device}/notification/${id}`)).body, notFound, 'belongs to another device')
  t.same((await h.request('GET', `/device/${device}/notification/424242`)).body, notFound)
  t.same((await h.request('GET', `/device/${device}/notification/abc`)).body, notFound)
  t.same((await h.request('GET', '/device/missing/notification/1')).body, { error: 404, message: 'Device with such deviceId = missing not found' })
})
