import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, tokenWithActions } from '../../fixtures/messaging.js'

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/

t.test('POST /device/{id}/command answers 201 with the insert view; GET returns the full view', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const res = await h.request('POST', `/device/${device}/command`, {
    body: { command: 'light-on', parameters: { b: 2, a: 1 }, lifetime: 60, status: 'new', result: { ok: false }, id: 999, userId: 7, deviceId: 'other' }
  })
  t.equal(res.status, 201)
  t.same(Object.keys(res.body).sort(), ['id', 'lastUpdated', 'timestamp', 'userId'])
  t.equal(res.body.userId, 1)
  t.match(res.body.timestamp, TS)
  t.equal(res.body.lastUpdated, res.body.timestamp)
  t.not(res.body.id, 999)

  const got = await h.request('GET', `/device/${device}/command/${res.body.id}`)
  t.equal(got.status, 200)
  t.same(got.body, {
    id: res.body.id,
    command: 'light-on',
    timestamp: res.body.timestamp,
    lastUpdated: res.body.timestamp,
    userId: 1,
    deviceId: device,
    networkId: 1,
    deviceTypeId: 1,
    parameters: { b: 2, a: 1 },
    lifetime: 60,
    status: 'new',
    result: { ok: false }
  })
  t.same(Object.keys(got.body.parameters), ['b', 'a'], 'key order kept')
})

t.test('POST keeps a client timestamp the clock can take, in any accepted form; replaces any other (issue #23)', async (t) => {
  let now = Date.UTC(2018, 4, 25, 7, 52, 54, 500)
  const h = await createTestApp(t, { clock: { now: () => now } })
  const device = await addDevice(h)
  const res = await h.request('POST', `/device/${device}/command`, { body: { command: 'c', timestamp: '2018-05-25T09:52:54.123+02:00' } })
  t.equal(res.status, 201)
  t.equal(res.body.timestamp, '2018-05-25T07:52:54.123', 'a timestamp 377 ms behind the server is kept (DeviceHive tests send new Date())')
  now = Date.UTC(2018, 4, 25, 7, 52, 54, 600)
  const epoch = await h.request('POST', `/device/${device}/command`, { body: { command: 'c', timestamp: '1527234774300' } })
  t.equal(epoch.body.timestamp, '2018-05-25T07:52:54.300', 'epoch milliseconds too')
  const old = await h.request('POST', `/device/${device}/command`, { body: { command: 'c', timestamp: '2000-01-01T00:00:00.000' } })
  t.equal(old.body.timestamp, '2018-05-25T07:52:54.600', 'an old one is replaced by the server time')
  const future = await h.request('POST', `/device/${device}/command`, { body: { command: 'c', timestamp: '2018-05-25T07:52:54.700' } })
  t.equal(future.body.timestamp, '2018-05-25T07:52:54.601', 'one ahead of the server clock is replaced too (the next free millisecond here)')
  const again = await h.request('POST', `/device/${device}/command`, { body: { command: 'c', timestamp: '1527234774300' } })
  t.equal(again.body.timestamp, '2018-05-25T07:52:54.602', 'one at or behind the last stamp gets the next free millisecond')
  t.equal(again.body.lastUpdated, again.body.timestamp)
})

t.test('POST errors', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const post = (body: unknown, token?: string | null, id = device): ReturnType<typeof h.request> =>
    h.request('POST', `/device/${id}/command`, { body, token })
  t.same((await post({ command: 'c' }, null)).body, { error: 401, message: 'Unauthorized' })
  t.same((await post({ command: 'c' }, tokenWithActions(h, [Action.GetDeviceCommand]))).body, { error: 403, message: 'Access is denied' })
  const noBody = await h.request('POST', `/device/${device}/command`)
  t.same(noBody.body, { error: 400, message: 'Error! Validation failed: Object is null' })
  t.same((await post({ command: 'c', parameters: [1] })).body, { error: 400, message: "'parameters' must be JSON Object!" })
  t.same((await post({ command: 'c', result: 'text' })).body, { error: 400, message: "'parameters' must be JSON Object!" })
  t.same((await post({ parameters: {} })).body, { error: 400, message: 'Invalid request parameters' }, 'R4: a name is required')
  t.same((await post({ command: 'c', timestamp: 'yesterday' })).body, { error: 400, message: 'Invalid request parameters' })
  t.same((await post({ command: 'c', lifetime: 'long' })).body, { error: 400, message: 'Invalid request parameters' })
  t.same((await post({ command: 'x'.repeat(129) })).body, { error: 400, message: 'Invalid request parameters' })
  t.same((await post({ command: 'c' }, undefined, 'missing-device')).body, { error: 404, message: 'Device with such deviceId = missing-device not found' })

  await h.store.networks.insert({ name: 'Other', description: null })
  const client = await h.createUser({ networkIds: [2] })
  const outside = await post({ command: 'c' }, client.accessToken)
  t.same(outside.body, { error: 403, message: 'Access is denied' }, 'D7: out of scope is 403 for a restricted token')
  const missing = await post({ command: 'c' }, client.accessToken, 'missing-device')
  t.same(missing.body, { error: 403, message: 'Access is denied' }, 'D7: and so is a missing device, so nothing leaks')
  const list = await h.request('GET', `/device/${device}/command`)
  t.same(list.body, [], 'nothing was stored by the failed requests')
})

t.test('GET /device/{id}/command: newest first, filters, sort, paging', async (t) => {
  let now = Date.UTC(2020, 0, 1, 9)
  const h = await createTestApp(t, { clock: { now: () => now }, tokenLifetimes: { accessMs: 86_400_000 } })
  const device = await addDevice(h)
  const other = await addDevice(h)
  // Each stored at the time it names: a client's timestamp is kept when the server clock can take it (issue #23).
  const insert = async (command: string, timestamp: string, status: string | null): Promise<number> => {
    now = Date.parse(`${timestamp}Z`)
    return (await h.request('POST', `/device/${device}/command`, { body: { command, timestamp, status } })).body.id
  }
  const a = await insert('alpha', '2020-01-01T10:00:00.000', 'Done')
  const b = await insert('beta', '2020-01-01T11:00:00.000', null)
  const c = await insert('alpha', '2020-01-01T12:00:00.000', 'pending')
  await h.request('POST', `/device/${other}/command`, { body: { command: 'alpha' } })
  const ids = async (query: Record<string, string | number>): Promise<number[]> => {
    const res = await h.request('GET', `/device/${device}/command`, { query })
    t.equal(res.status, 200)
    return res.body.map((x: { id: number }) => x.id)
  }
  t.same(await ids({}), [c, b, a], 'newest first, only this device')
  t.same(await ids({ sortOrder: 'ASC' }), [a, b, c])
  t.same(await ids({ command: 'alpha' }), [c, a])
  t.same(await ids({ status: 'done' }), [a], 'status ignores case')
  t.same(await ids({ start: '2020-01-01T11:00:00.000' }), [c, b], 'start is inclusive')
  t.same(await ids({ start: '2020-01-01T11:00:00Z', end: '2020-01-01T11:00:00.000' }), [b], 'end is inclusive; Z accepted')
  t.same(await ids({ start: '2030-01-01T00:00:00.000' }), [])
  t.same(await ids({ sortField: 'COMMAND', sortOrder: 'asc' }), [a, c, b])
  t.same(await ids({ sortField: 'status', sortOrder: 'ASC' }), [b, a, c], 'null status sorts as empty string')
  t.same(await ids({ sortField: 'nonsense' }), [c, b, a], 'unknown sort field falls back to timestamp')
  t.same(await ids({ take: 1, skip: 1 }), [b])
  t.same(await ids({ take: 0 }), [])
  const bad = await h.request('GET', `/device/${device}/command`, { query: { start: 'not-a-date' } })
  t.same(bad.body, { error: 400, message: 'Unparseable timestamp' })
  const negative = await h.request('GET', `/device/${device}/command`, { query: { take: -1 } })
  t.same(negative.body, { error: 400, message: 'Invalid request parameters' })
  const missing = await h.request('GET', '/device/nope/command')
  t.same(missing.body, { error: 404, message: 'Device with such deviceId = nope not found' })
})

t.test('GET /device/{id}/command/{commandId} errors and returnUpdatedCommands', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const other = await addDevice(h)
  const id = (await h.request('POST', `/device/${device}/command`, { body: { command: 'c' } })).body.id
  t.same((await h.request('GET', `/device/${other}/command/${id}`)).body, { error: 404, message: `Command with id = ${id} not found` }, 'another device')
  t.same((await h.request('GET', `/device/${device}/command/123456`)).body, { error: 404, message: 'Command with id = 123456 not found' })
  t.same((await h.request('GET', `/device/${device}/command/abc`)).body, { error: 404, message: 'Command with id = abc not found' })
  t.same((await h.request('GET', `/device/${device}/command/${id}`, { query: { returnUpdatedCommands: true } })).body, { error: 404, message: `Command with id = ${id} not found` })
  await h.request('PUT', `/device/${device}/command/${id}`, { body: {} })
  const updated = await h.request('GET', `/device/${device}/command/${id}`, { query: { returnUpdatedCommands: true } })
  t.equal(updated.status, 200)
  t.equal(updated.body.id, id)
  t.equal(updated.body.isUpdated, undefined, 'isUpdated is never serialised')
  t.same((await h.request('GET', `/device/${device}/command/${id}`, { token: tokenWithActions(h, [Action.GetDeviceNotification]) })).body, { error: 403, message: 'Access is denied' })
})

t.test('PUT /device/{id}/command/{commandId} updates status and result only', async (t) => {
  let now = Date.UTC(2024, 0, 1, 12, 0, 0)
  const h = await createTestApp(t, { clock: { now: () => now } })
  const device = await addDevice(h)
  const other = await addDevice(h)
  const created = await h.request('POST', `/device/${device}/command`, { body: { command: 'c', parameters: { p: 1 }, status: 'new', result: { r: 0 } } })
  const id = created.body.id
  now += 5000
  const res = await h.request('PUT', `/device/${device}/command/${id}`, { body: { status: 'Done', result: { r: 1 }, command: 'renamed', parameters: { p: 2 }, lifetime: 5, newField: 'x' } })
  t.equal(res.status, 204)
  t.equal(res.text, '')
  const got = await h.request('GET', `/device/${device}/command/${id}`)
  t.same(got.body, {
    id,
    command: 'c',
    timestamp: '2024-01-01T12:00:00.000',
    lastUpdated: '2024-01-01T12:00:05.000',
    userId: 1,
    deviceId: device,
    networkId: 1,
    deviceTypeId: 1,
    parameters: { p: 1 },
    lifetime: null,
    status: 'Done',
    result: { r: 1 }
  })
  now += 1000
  t.equal((await h.request('PUT', `/device/${device}/command/${id}`, { body: { status: null, result: null } })).status, 204)
  const again = await h.request('GET', `/device/${device}/command/${id}`)
  t.equal(again.body.status, 'Done', 'null values leave the fields alone')
  t.same(again.body.result, { r: 1 })
  t.equal(again.body.lastUpdated, '2024-01-01T12:00:06.000', 'lastUpdated moves on every update')

  t.same((await h.request('PUT', `/device/${device}/command/${id}`)).body, { error: 400, message: 'Error! Validation failed: Object is null' })
  t.same((await h.request('PUT', `/device/${device}/command/${id}`, { body: { result: [1] } })).body, { error: 400, message: "'parameters' must be JSON Object!" })
  t.same((await h.request('PUT', `/device/${other}/command/${id}`, { body: {} })).body, { error: 404, message: `Command with id = ${id} not found` })
  t.same((await h.request('PUT', `/device/${device}/command/999`, { body: {} })).body, { error: 404, message: 'Command with id = 999 not found' })
  t.same((await h.request('PUT', `/device/${device}/command/${id}`, { body: {}, token: tokenWithActions(h, [Action.CreateDeviceCommand]) })).body, { error: 403, message: 'Access is denied' })
  t.same((await h.request('DELETE', `/device/${device}/command/${id}`)).body, { error: 405, message: 'HTTP 405 Method Not Allowed' })
})

t.test('command and notification queries refuse out-of-range paging with 400, never 500', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  for (const path of [`/device/${device}/command`, `/device/${device}/notification`]) {
    for (const query of ['skip=1e30', 'take=1e30', 'take=-1', 'skip=-5', 'take=abc']) {
      const res = await h.request('GET', `${path}?${query}`)
      t.same(res.body, { error: 400, message: 'Invalid request parameters' }, `${path}?${query}`)
    }
  }
})
