import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import { createTestApp } from '../../fixtures/app.js'
import { registry } from '../../fixtures/registry.js'

const DEFAULT = { id: 1, name: 'Default Device Type', description: 'Default DeviceHive device type' }

t.test('device type endpoints with exact views', async (t) => {
  const h = await createTestApp(t)
  const created = await h.request('POST', '/devicetype', { body: { name: 'Sensors', description: 'Thermo', id: 9 } })
  t.same([created.status, created.body], [201, { id: 2 }])
  t.same((await h.request('GET', '/devicetype/2')).body, { id: 2, name: 'Sensors', description: 'Thermo', devices: [] })
  await registry(h).device('s-1', { deviceTypeId: 2, isBlocked: true })
  t.same((await h.request('GET', '/devicetype/2')).body, { id: 2, name: 'Sensors', description: 'Thermo', devices: [{ id: 's-1', name: 's-1', data: null, isBlocked: true }] })
  t.same((await h.request('GET', '/devicetype')).body, [DEFAULT, { id: 2, name: 'Sensors', description: 'Thermo' }])
  t.same((await h.request('GET', '/devicetype/count')).body, { count: 2 })
  t.same((await h.request('GET', '/devicetype/count?namePattern=Sen%25')).body, { count: 1 })
  t.same((await h.request('GET', '/devicetype?sortField=Name&sortOrder=DESC')).body.map((d: { id: number }) => d.id), [2, 1])
  t.same((await h.request('GET', '/devicetype?name=Sensors')).body, [{ id: 2, name: 'Sensors', description: 'Thermo' }])
  t.equal((await h.request('PUT', '/devicetype/2', { body: { name: 'Sensors 2', description: 'x' } })).status, 204)
  t.same((await h.request('GET', '/devicetype/2')).body.name, 'Sensors 2')
})

t.test('device type errors', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const other = await r.deviceType('Other')
  const cases: Array<[string, string, unknown, number, string]> = [
    ['POST', '/devicetype', { name: 'Default Device Type' }, 403, 'Device type cannot be created. Device type with such name already exists'],
    ['PUT', `/devicetype/${other}`, { name: 'Default Device Type' }, 403, 'Device type cannot be created. Device type with such name already exists'],
    ['POST', '/devicetype', undefined, 400, 'Error! Validation failed: Object is null'],
    ['POST', '/devicetype', { name: {} }, 400, 'Invalid request parameters'],
    ['POST', '/devicetype', { description: 'no name' }, 400, 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property name (value: null): name field cannot be null. ; '],
    ['GET', '/devicetype/999999', undefined, 404, 'Device type with id = 999999 not found'],
    ['GET', '/devicetype/0', undefined, 404, 'Device type with id = 0 not found'],
    ['PUT', '/devicetype/999999', {}, 404, 'Device type with id = 999999 not found'],
    ['DELETE', '/devicetype/999999', undefined, 404, 'Device type with id = 999999 not found'],
    ['GET', '/devicetype?sortField=network', undefined, 400, 'Invalid request parameters'],
    ['GET', '/devicetype?take=-5', undefined, 400, 'Invalid request parameters']
  ]
  const before = await r.snapshot()
  for (const [method, path, body, status, message] of cases) {
    const res = await h.request(method, path, { body })
    t.same([res.status, res.body], [status, { error: status, message }], `${method} ${path}`)
  }
  t.same(await r.snapshot(), before, 'nothing changed')
  const noAction = r.token(1, [Action.GetNetwork, Action.ManageNetwork], ['*'], ['*'])
  for (const [method, path] of [['GET', '/devicetype'], ['GET', '/devicetype/count'], ['GET', '/devicetype/1'], ['POST', '/devicetype'], ['PUT', '/devicetype/1'], ['DELETE', '/devicetype/1']] as const) {
    const res = await h.request(method, path, { token: noAction, body: method === 'GET' ? undefined : { name: 'n' } })
    t.same([res.status, res.body], [403, { error: 403, message: 'Access is denied' }], `${method} ${path} without the action`)
  }
})

t.test('device type delete: refused with devices, forced cascade (§8)', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const type = await r.deviceType('Cams')
  await r.device('cam-1', { deviceTypeId: type })
  await r.device('plain', { deviceTypeId: 1 })
  const client = await h.createUser({ allDeviceTypesAvailable: false, deviceTypeIds: [type] })
  const refused = await h.request('DELETE', `/devicetype/${type}`)
  t.same([refused.status, refused.body], [400, { error: 400, message: 'There are the following devices within this device type: cam-1. Please review and delete them first.' }])
  t.equal((await h.request('DELETE', `/devicetype/${type}?force=true`)).status, 204)
  t.equal((await h.request('GET', '/device/cam-1')).status, 404)
  t.equal((await h.request('GET', '/device/plain')).status, 200)
  t.same(await h.store.users.deviceTypeIds(client.user.id), [])
  const empty = await r.deviceType('Empty')
  t.equal((await h.request('DELETE', `/devicetype/${empty}`)).status, 204, 'no devices: no force needed')
})

t.test('device type scope: allDeviceTypesAvailable and assignments', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const a = await r.deviceType('A')
  const b = await r.deviceType('B')
  await r.device('dev-a', { deviceTypeId: a })
  const all = await h.createUser({ networkIds: [1] })
  const some = await h.createUser({ networkIds: [1], allDeviceTypesAvailable: false, deviceTypeIds: [a] })
  const ids = async (token: string): Promise<number[]> => (await h.request('GET', '/devicetype', { token })).body.map((d: { id: number }) => d.id)
  t.same(await ids(all.accessToken), [1, a, b])
  t.same(await ids(some.accessToken), [a])
  t.same((await h.request('GET', '/devicetype/count', { token: some.accessToken })).body, { count: 1 })
  const hidden = await h.request('GET', `/devicetype/${b}`, { token: some.accessToken })
  t.same([hidden.status, hidden.body], [403, { error: 403, message: 'Access is denied' }], 'D7: not in the token\'s dt')
  const ghost = await h.request('GET', '/devicetype/999999', { token: some.accessToken })
  t.same([ghost.status, ghost.body], [403, { error: 403, message: 'Access is denied' }], 'D7: a missing one alike')
  const allTypes = r.token(some.user.id, [Action.GetDeviceType], ['*'], ['*'])
  const unassigned = await h.request('GET', `/devicetype/${b}`, { token: allTypes })
  t.same([unassigned.status, unassigned.body], [404, { error: 404, message: `Device type with id = ${b} not found` }], 'dt * but not assigned: 404')
  t.same((await h.request('GET', `/devicetype/${a}`, { token: some.accessToken })).body.devices.map((d: { id: string }) => d.id), ['dev-a'])
  // The flag overrides the token's dt (auth spec §4.1).
  const narrowed = r.token(all.user.id, [Action.GetDeviceType], ['*'], [String(a)])
  t.same(await ids(narrowed), [1, a, b])
  const narrowedSome = r.token(some.user.id, [Action.GetDeviceType], ['*'], [String(b)])
  t.same(await ids(narrowedSome), [], 'token dt intersected with the assignments')
  t.same((await h.request('GET', '/devicetype/count', { token: narrowedSome })).body, { count: 0 })
})
