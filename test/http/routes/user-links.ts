import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import { createTestApp } from '../../fixtures/app.js'
import { registry } from '../../fixtures/registry.js'

const SAMPLE = { id: 1, name: 'Sample Network', description: 'A DeviceHive Sample Network' }
const DEFAULT_TYPE = { id: 1, name: 'Default Device Type', description: 'Default DeviceHive device type' }

t.test('user <-> network links', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({})
  const u = client.user.id
  const missing = await h.request('GET', `/user/${u}/network/1`)
  t.same([missing.status, missing.body], [404, { error: 404, message: `Network with id 1 for user with id ${u} was not found` }])

  const put = await h.request('PUT', `/user/${u}/network/1`)
  t.same([put.status, put.text], [204, ''])
  t.equal((await h.request('PUT', `/user/${u}/network/1`)).status, 204, 'idempotent')
  const got = await h.request('GET', `/user/${u}/network/1`)
  t.same([got.status, got.body], [200, { network: SAMPLE }])
  t.same((await h.request('GET', '/network', { token: client.accessToken })).body, [], 'a login token keeps the networks it was issued with')
  t.same((await h.request('GET', '/network', { token: registry(h).token(u, [], ['*'], ['*']) })).body, [SAMPLE], 'the assignment grants visibility')

  t.equal((await h.request('DELETE', `/user/${u}/network/1`)).status, 204)
  t.equal((await h.request('DELETE', `/user/${u}/network/1`)).status, 204, 'no-op when not assigned')
  t.equal((await h.request('GET', `/user/${u}/network/1`)).status, 404)

  const cases: Array<[string, string, number, string]> = [
    ['GET', `/user/999999/network/1`, 404, 'User with id = 999999 not found'],
    ['PUT', `/user/999999/network/1`, 404, 'User with id = 999999 not found'],
    ['DELETE', `/user/999999/network/1`, 404, 'User with id = 999999 not found'],
    ['PUT', `/user/${u}/network/999999`, 404, 'Network with id = 999999 not found'],
    ['DELETE', `/user/${u}/network/999999`, 404, 'Network with id = 999999 not found'],
    ['PUT', `/user/${u}/network/0`, 404, 'Network with id = 0 not found'],
    ['GET', `/user/${u}/network/999999`, 404, `Network with id 999999 for user with id ${u} was not found`],
    ['PUT', `/user/${u}/network/abc`, 404, 'HTTP 404 Not Found']
  ]
  for (const [method, path, status, message] of cases) {
    const res = await h.request(method, path)
    t.same([res.status, res.body], [status, { error: status, message }], `${method} ${path}`)
  }
  t.same(await h.store.users.networkIds(u), [])
})

t.test('user <-> device type links', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const cams = await r.deviceType('Cams')
  const cam = { id: cams, name: 'Cams', description: null }
  const client = await h.createUser({ networkIds: [1] })
  const u = client.user.id

  t.same((await h.request('GET', `/user/${u}/devicetype`)).body, [DEFAULT_TYPE, cam], 'flag true: all types')
  t.same((await h.request('GET', `/user/${u}/devicetype/${cams}`)).body, { deviceType: cam })
  const refused = await h.request('PUT', `/user/${u}/devicetype/${cams}`)
  t.same([refused.status, refused.body], [403, { error: 403, message: 'Cannot assign device type to user with all device types allowed' }])
  t.same((await h.request('DELETE', `/user/${u}/devicetype/${cams}`)).body, { error: 403, message: 'Cannot assign device type to user with all device types allowed' })

  t.same([(await h.request('DELETE', `/user/${u}/devicetype/all`)).status], [204])
  t.equal((await h.request('GET', `/user/${u}`)).body.allDeviceTypesAvailable, false)
  t.same((await h.request('GET', `/user/${u}/devicetype`)).body, [], 'flag false, nothing assigned')
  t.same((await h.request('GET', '/devicetype', { token: client.accessToken })).body, [], 'the client sees no type now')
  t.same((await h.request('GET', `/user/${u}/devicetype/${cams}`)).body, { error: 404, message: `Device type with id ${cams} for user with id ${u} not found` })

  t.equal((await h.request('PUT', `/user/${u}/devicetype/${cams}`)).status, 204)
  t.same((await h.request('GET', `/user/${u}/devicetype`)).body, [cam])
  t.same((await h.request('GET', `/user/${u}/devicetype/${cams}`)).body, { deviceType: cam })
  t.same((await h.request('GET', '/devicetype', { token: client.accessToken })).body, [cam])
  t.equal((await h.request('DELETE', `/user/${u}/devicetype/${cams}`)).status, 204)
  t.same((await h.request('GET', `/user/${u}/devicetype`)).body, [])
  t.equal((await h.request('PUT', `/user/${u}/devicetype/${cams}`)).status, 204)

  t.equal((await h.request('PUT', `/user/${u}/devicetype/all`)).status, 204)
  t.equal((await h.request('GET', `/user/${u}`)).body.allDeviceTypesAvailable, true)
  t.same(await h.store.users.deviceTypeIds(u), [], 'individual assignments removed')

  await h.request('DELETE', `/user/${u}/devicetype/all`)
  const cases: Array<[string, string, number, string]> = [
    ['GET', '/user/999999/devicetype', 404, 'User with id = 999999 not found'],
    ['GET', `/user/999999/devicetype/${cams}`, 404, 'User with id = 999999 not found'],
    ['PUT', `/user/999999/devicetype/${cams}`, 404, 'User with id = 999999 not found'],
    ['DELETE', `/user/999999/devicetype/${cams}`, 404, 'User with id = 999999 not found'],
    ['PUT', '/user/999999/devicetype/all', 404, 'User with id = 999999 not found'],
    ['DELETE', '/user/999999/devicetype/all', 404, 'User with id = 999999 not found'],
    ['PUT', `/user/${u}/devicetype/999999`, 404, 'Device type with id = 999999 not found'],
    ['DELETE', `/user/${u}/devicetype/0`, 404, 'Device type with id = 0 not found'],
    ['GET', `/user/${u}/devicetype/999999`, 404, `Device type with id 999999 for user with id ${u} not found`],
    ['GET', `/user/${u}/devicetype/x1`, 404, 'HTTP 404 Not Found']
  ]
  for (const [method, path, status, message] of cases) {
    const res = await h.request(method, path)
    t.same([res.status, res.body], [status, { error: status, message }], `${method} ${path}`)
  }
  t.same(await h.store.users.deviceTypeIds(u), [])
})

t.test('link actions and scope', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net2 = await r.network('N2')
  const type2 = await r.deviceType('T2')
  const target = await h.createUser({ networkIds: [1, net2], allDeviceTypesAvailable: false, deviceTypeIds: [1, type2] })
  const u = target.user.id
  const denied = { error: 403, message: 'Access is denied' }

  // Reads need GetNetwork / GetDeviceType; writes ManageNetwork / ManageDeviceType; the list ManageDeviceType.
  const reader = await h.createUser({ networkIds: [1], allDeviceTypesAvailable: false, deviceTypeIds: [1] })
  const me = reader.user.id
  t.same((await h.request('GET', `/user/${me}/network/1`, { token: reader.accessToken })).body, { network: { id: 1, name: 'Sample Network', description: 'A DeviceHive Sample Network' } })
  t.same((await h.request('GET', `/user/${me}/devicetype/1`, { token: reader.accessToken })).body.deviceType.id, 1)
  // #16: one rule for /user/{id}/...: only an admin reads another user's links, the same 403 whatever exists.
  t.same((await h.request('GET', `/user/${u}/network/1`, { token: reader.accessToken })).body, { error: 403, message: `User with id = ${u} not found` }, 'another user\'s links do not leak')
  t.same((await h.request('GET', `/user/${u}/devicetype/${type2}`, { token: reader.accessToken })).body, { error: 403, message: `User with id = ${u} not found` })
  for (const [method, path] of [['PUT', `/user/${u}/network/1`], ['DELETE', `/user/${u}/network/1`], ['GET', `/user/${u}/devicetype`], ['PUT', `/user/${u}/devicetype/1`], ['DELETE', `/user/${u}/devicetype/1`], ['PUT', `/user/${u}/devicetype/all`], ['DELETE', `/user/${u}/devicetype/all`]] as const) {
    const res = await h.request(method, path, { token: reader.accessToken })
    t.same([res.status, res.body], [403, denied], `${method} ${path} without the manage action`)
  }
  const noGet = r.token(1, [Action.ManageNetwork, Action.ManageDeviceType], ['*'], ['*'])
  t.same((await h.request('GET', `/user/${u}/network/1`, { token: noGet })).body, denied)
  t.same((await h.request('GET', `/user/${u}/devicetype/1`, { token: noGet })).body, denied)

  // An administrator manages assignments by its action alone, as DeviceHive does (issue 23),
  // whatever networks its token lists; a client cannot hand out what it cannot see (below).
  const narrowed = r.token(1, [Action.ManageNetwork, Action.ManageDeviceType, Action.GetDeviceType], ['1'], ['*'])
  t.equal((await h.request('PUT', `/user/${reader.user.id}/network/${net2}`, { token: narrowed })).status, 204)
  t.same(await h.store.users.networkIds(reader.user.id), [1, net2])
  t.equal((await h.request('DELETE', `/user/${reader.user.id}/network/${net2}`, { token: narrowed })).status, 204)
  t.same(await h.store.users.networkIds(reader.user.id), [1])
  const typeManager = await h.createUser({ networkIds: [1], allDeviceTypesAvailable: false, deviceTypeIds: [1] })
  const typeToken = r.token(typeManager.user.id, [Action.ManageDeviceType, Action.GetDeviceType], ['*'], ['*'])
  t.same((await h.request('PUT', `/user/${reader.user.id}/devicetype/${type2}`, { token: typeToken })).body, { error: 403, message: `User with id = ${reader.user.id} not found` }, 'only an admin links another user (#16)')
  t.same((await h.request('PUT', `/user/${typeManager.user.id}/devicetype/${type2}`, { token: typeToken })).body, { error: 404, message: `Device type with id = ${type2} not found` }, 'nor a type it cannot see to itself')
  t.same((await h.request('PUT', `/user/${typeManager.user.id}/devicetype/all`, { token: typeToken })).body, denied, 'cannot grant all device types without holding them')
  t.equal((await h.store.users.findById(typeManager.user.id))?.allDeviceTypesAvailable, false)
  t.same((await h.request('GET', `/user/${typeManager.user.id}/devicetype`, { token: typeToken })).body, [{ id: 1, name: 'Default Device Type', description: 'Default DeviceHive device type' }], 'the list is limited to the caller\'s types')
})
