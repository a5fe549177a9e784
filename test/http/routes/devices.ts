import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import type { KyselyStore } from '../../../lib/store/kysely-store.js'
import { createTestApp } from '../../fixtures/app.js'
import type { TestApp } from '../../fixtures/app.js'
import { registry } from '../../fixtures/registry.js'

async function systemNotifications (h: TestApp, deviceId: string): Promise<unknown[]> {
  const rows = await (h.store as KyselyStore).db.selectFrom('notifications').selectAll()
    .where('device_id', '=', deviceId).orderBy('id').execute()
  return rows.map((r) => ({ notification: r.notification, networkId: Number(r.network_id), deviceTypeId: Number(r.device_type_id), parameters: JSON.parse(r.parameters ?? 'null') }))
}

t.test('register with only a name: defaults, exact view, $device-add', async (t) => {
  const h = await createTestApp(t)
  const put = await h.request('PUT', '/device/dev-1', { body: { name: 'First', id: 'ignored', other: 1 } })
  t.equal(put.status, 204)
  t.equal(put.text, '')
  const got = await h.request('GET', '/device/dev-1')
  t.same([got.status, got.body], [200, { id: 'dev-1', name: 'First', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false, lastSeen: null, online: false }])
  t.same(Object.keys(got.body), ['id', 'name', 'data', 'networkId', 'deviceTypeId', 'isBlocked', 'lastSeen', 'online'])
  t.same(await systemNotifications(h, 'dev-1'), [{
    notification: '$device-add',
    networkId: 1,
    deviceTypeId: 1,
    parameters: { id: 'dev-1', name: 'First', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false }
  }])
})

t.test('update rules and $device-update', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net = await r.network('Second')
  const type = await r.deviceType('Second type')
  await r.device('dev-2', { name: 'Two', data: { z: 1, a: 2 }, isBlocked: true })
  t.same((await h.request('GET', '/device/dev-2')).body, { id: 'dev-2', name: 'Two', data: { z: 1, a: 2 }, networkId: 1, deviceTypeId: 1, isBlocked: true, lastSeen: null, online: false })
  t.match((await h.request('GET', '/device/dev-2')).text, /"data":\{"z":1,"a":2\}/, 'key order kept')

  t.equal((await h.request('PUT', '/device/dev-2', { body: {} })).status, 204, '{} is a valid update')
  t.same((await h.request('GET', '/device/dev-2')).body, { id: 'dev-2', name: 'Two', data: null, networkId: 1, deviceTypeId: 1, isBlocked: true, lastSeen: null, online: false }, 'absent data clears it, the rest is kept')

  t.equal((await h.request('PUT', '/device/dev-2', { body: { name: null, networkId: null, deviceTypeId: null, isBlocked: null, data: { k: 'v' } } })).status, 204)
  t.same((await h.request('GET', '/device/dev-2')).body, { id: 'dev-2', name: 'Two', data: { k: 'v' }, networkId: 1, deviceTypeId: 1, isBlocked: true, lastSeen: null, online: false }, 'nulls leave fields unchanged')

  t.equal((await h.request('PUT', '/device/dev-2', { body: { name: 'Renamed', networkId: String(net), deviceTypeId: type, isBlocked: false } })).status, 204)
  const moved = { id: 'dev-2', name: 'Renamed', data: null, networkId: net, deviceTypeId: type, isBlocked: false }
  t.same((await h.request('GET', '/device/dev-2')).body, { ...moved, lastSeen: null, online: false }, 'quoted numbers accepted')
  const notes = await systemNotifications(h, 'dev-2')
  t.same(notes.map((n) => (n as { notification: string }).notification), ['$device-add', '$device-update', '$device-update', '$device-update'])
  t.same(notes[3], { notification: '$device-update', networkId: net, deviceTypeId: type, parameters: moved })
})

t.test('registration errors answer the contract messages and change nothing', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  await r.device('existing', { data: { keep: true } })
  const cases: Array<[string, unknown, number, string]> = [
    ['comma,test', { name: 'x' }, 400, 'Device Id can only contain letters, digits and dashes.'],
    [encodeURIComponent('$pecial_symbol&test'), { name: 'x' }, 400, 'Device Id can only contain letters, digits and dashes.'],
    [encodeURIComponent('m*!t1s1#bo!_test'), { name: 'x' }, 400, 'Device Id can only contain letters, digits and dashes.'],
    ['a'.repeat(49), { name: 'x' }, 400, 'Field cannot be empty. The length of guid should not be more than 48 symbols.'],
    ['new-dev', undefined, 400, 'Error! Validation failed: Object is null'],
    ['new-dev', {}, 400, 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property name (value: null): name field cannot be null. ; '],
    ['new-dev', { name: 'x'.repeat(129) }, 400, `Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property name (value: ${'x'.repeat(129)}): Field cannot be empty. The length of name should not be more than 128 symbols. ; `],
    ['new-dev', { name: '' }, 400, 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property name (value: ): Field cannot be empty. The length of name should not be more than 128 symbols. ; '],
    ['existing', { data: [1, 2] }, 400, "'parameters' must be JSON Object!"],
    ['existing', { data: 'text' }, 400, "'parameters' must be JSON Object!"],
    ['existing', { data: 5 }, 400, "'parameters' must be JSON Object!"],
    ['existing', { data: true }, 400, "'parameters' must be JSON Object!"],
    ['existing', { networkId: 'invalid' }, 400, 'Invalid request parameters'],
    ['existing', { networkId: 999999 }, 400, 'Invalid request parameters'],
    ['existing', { networkId: 0 }, 400, 'Invalid request parameters'],
    ['existing', { networkId: -3 }, 400, 'Invalid request parameters'],
    ['existing', { deviceTypeId: 999999 }, 400, 'Invalid request parameters'],
    ['existing', { isBlocked: 'maybe' }, 400, 'Invalid request parameters'],
    ['existing', { name: { x: 1 } }, 400, 'Invalid request parameters']
  ]
  const before = await r.snapshot()
  for (const [id, body, status, message] of cases) {
    const res = await h.request('PUT', `/device/${id}`, { body })
    t.same([res.status, res.body], [status, { error: status, message }], `PUT /device/${id.slice(0, 20)} ${JSON.stringify(body)?.slice(0, 40)}`)
  }
  const notJson = await h.request('PUT', '/device/existing', { payload: '{"name": ' })
  t.same([notJson.status, notJson.body], [400, { error: 400, message: 'Invalid request parameters' }])
  t.same(await r.snapshot(), before, 'nothing changed')
  t.same(await systemNotifications(h, 'new-dev'), [], 'no notification for a refused registration')
  t.equal((await systemNotifications(h, 'existing')).length, 1)
})

t.test('network and device type resolution for clients', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net2 = await r.network('N2')
  const net3 = await r.network('N3')
  const type2 = await r.deviceType('T2')
  await r.device('in-net3', { networkId: net3 })
  const client = await h.createUser({ networkIds: [net3, net2] })
  const token = client.accessToken

  t.equal((await h.request('PUT', '/device/client-dev', { token, body: { name: 'c' } })).status, 204)
  t.same((await h.request('GET', '/device/client-dev', { token })).body, { id: 'client-dev', name: 'c', data: null, networkId: net2, deviceTypeId: 1, isBlocked: false, lastSeen: null, online: false }, 'default network is the lowest assigned id')

  const cases: Array<[string, string, unknown, number, string]> = [
    ['other-net', token, { name: 'x', networkId: 1 }, 403, 'No access to network!'],
    ['other-dev', token, { name: 'x', networkId: 999999 }, 400, 'Invalid request parameters'],
    ['in-net3', (await h.createUser({ networkIds: [net2] })).accessToken, { name: 'x', networkId: net2 }, 403, 'No access to device'],
    ['nobody-dev', (await h.createUser({})).accessToken, { name: 'x' }, 403, 'No access to network!'],
    ['no-types', (await h.createUser({ networkIds: [net2], allDeviceTypesAvailable: false })).accessToken, { name: 'x' }, 403, 'No access to device type!'],
    ['hidden-type', (await h.createUser({ networkIds: [net2], allDeviceTypesAvailable: false, deviceTypeIds: [1] })).accessToken, { name: 'x', deviceTypeId: type2 }, 403, 'No access to device type!']
  ]
  for (const [id, tok, body, status, message] of cases) {
    const res = await h.request('PUT', `/device/${id}`, { token: tok, body })
    t.same([res.status, res.body], [status, { error: status, message }], `${id}`)
  }
  t.same((await h.request('GET', '/device/in-net3')).body.name, 'in-net3', 'foreign device untouched')

  const typed = await h.createUser({ networkIds: [net2], allDeviceTypesAvailable: false, deviceTypeIds: [type2] })
  t.equal((await h.request('PUT', '/device/typed', { token: typed.accessToken, body: { name: 't' } })).status, 204)
  t.equal((await h.request('GET', '/device/typed')).body.deviceTypeId, type2, 'default type is the lowest allowed')

  // D7: registration reads the user's own assignments, never the token's lists.
  const narrowed = r.token(client.user.id, [Action.RegisterDevice, Action.GetDevice], [String(net3)], ['*'])
  t.equal((await h.request('PUT', '/device/narrow', { token: narrowed, body: { name: 'n' } })).status, 204)
  t.equal((await h.request('GET', '/device/narrow')).body.networkId, net2, 'default network: the lowest the user is assigned to')
})

t.test('D7: registration is authorised by RegisterDevice and the user\'s own assignments', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net5 = await r.network('N5')
  const net6 = await r.network('N6')
  const type2 = await r.deviceType('T2')
  await r.device('in-6', { networkId: net6 })
  const client = await h.createUser({ networkIds: [net5], allDeviceTypesAvailable: false, deviceTypeIds: [1] })
  // A token minted without networkIds (n: null) but with RegisterDevice, as /token/create does.
  const bare = h.sign({ u: client.user.id, a: [Action.RegisterDevice], n: null, dt: null, e: Date.now() + 60_000, t: 1 })
  t.equal((await h.request('PUT', '/device/new-1', { token: bare, body: { networkId: net5 } })).status, 400, 'a new device still needs a name')
  t.equal((await h.request('PUT', '/device/new-1', { token: bare, body: { name: 'n', networkId: net5 } })).status, 204, 'registered in an assigned network')
  t.same((await h.request('GET', '/device/new-1')).body, { id: 'new-1', name: 'n', data: null, networkId: net5, deviceTypeId: 1, isBlocked: false, lastSeen: null, online: false })
  t.equal((await h.request('PUT', '/device/new-1', { token: bare, body: { networkId: net5 } })).status, 204, 'an update needs no name')

  // No extra access: the user's assignments bound everything the token's lists no longer do.
  const refused: Array<[string, unknown, number, string]> = [
    ['new-2', { name: 'x', networkId: net6 }, 403, 'No access to network!'],
    ['new-2', { name: 'x', networkId: net5, deviceTypeId: type2 }, 403, 'No access to device type!'],
    ['in-6', { name: 'x' }, 403, 'No access to device'],
    ['in-6', { name: 'x', networkId: net5 }, 403, 'No access to device']
  ]
  for (const [id, body, status, message] of refused) {
    const res = await h.request('PUT', `/device/${id}`, { token: bare, body })
    t.same([res.status, res.body], [status, { error: status, message }], `PUT /device/${id} ${JSON.stringify(body)}`)
  }
  t.equal((await h.request('GET', '/device/new-2')).status, 404, 'nothing registered')
  t.same((await h.request('GET', '/device/in-6')).body.networkId, net6, 'the foreign device did not move')
  t.same((await h.request('GET', '/device/in-6')).body.name, 'in-6')
  const noAction = h.sign({ u: client.user.id, a: [Action.GetDevice], n: ['*'], dt: ['*'], e: Date.now() + 60_000, t: 1 })
  const res = await h.request('PUT', '/device/new-3', { token: noAction, body: { name: 'x', networkId: net5 } })
  t.same([res.status, res.body], [403, { error: 403, message: 'Access is denied' }], 'RegisterDevice is still required')
  // The token's lists still bound reads: the bare token sees no device at all.
  t.same((await h.request('GET', '/device/new-1', { token: bare })).status, 403)
})

t.test('plugin tokens cannot register devices (401)', async (t) => {
  const h = await createTestApp(t)
  await (h.store as KyselyStore).db.insertInto('plugins').values({
    name: 'p', description: null, topic_name: 'plugin_topic_x', filter: '*', status: 0, subscription_id: null, user_id: 1, parameters: null
  }).execute()
  const token = h.sign({ tpc: 'plugin_topic_x', a: [Action.RegisterDevice, Action.GetDevice], e: Date.now() + 60_000, t: 1 })
  const res = await h.request('PUT', '/device/plugin-dev', { token, body: { name: 'p' } })
  t.same([res.status, res.body], [401, { error: 401, message: 'Unauthorized' }])
  t.equal((await h.request('GET', '/device/plugin-dev')).status, 404)
  const current = await h.request('GET', '/user/current', { token: h.sign({ tpc: 'plugin_topic_x', a: [0], e: Date.now() + 60_000, t: 1 }) })
  t.same([current.status, current.body], [401, { error: 401, message: 'Unauthorized' }], '/user/current needs a user')
})

t.test('list filters, sorting, paging and counts agree', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const lab = await r.network('Lab')
  const cams = await r.deviceType('Cams')
  await r.device('d1', { name: 'Zeta', networkId: lab })
  await r.device('d2', { name: 'alpha', deviceTypeId: cams })
  await r.device('d3', { name: 'Alpha', networkId: lab, deviceTypeId: cams })
  await r.device('d4', { name: 'beta' })
  const ids = async (query: string): Promise<string[]> => {
    const res = await h.request('GET', `/device${query}`)
    t.equal(res.status, 200, query)
    return res.body.map((d: { id: string }) => d.id)
  }
  const count = async (query: string): Promise<number> => (await h.request('GET', `/device/count${query}`)).body.count
  const filters: Array<[string, string[]]> = [
    ['', ['d1', 'd2', 'd3', 'd4']],
    ['?name=alpha', ['d2']],
    ['?namePattern=%25lpha', ['d2', 'd3']],
    ['?namePattern=a%25', ['d2']],
    [`?networkId=${lab}`, ['d1', 'd3']],
    ['?networkName=Lab', ['d1', 'd3']],
    ['?networkName=Nope', []],
    [`?deviceTypeId=${cams}`, ['d2', 'd3']],
    ['?deviceTypeName=Cams', ['d2', 'd3']],
    [`?networkId=${lab}&deviceTypeName=Cams`, ['d3']],
    ['?networkId=999999', []]
  ]
  for (const [query, expected] of filters) {
    t.same(await ids(query), expected, query)
    t.equal(await count(query), expected.length, `count${query}`)
  }
  t.same(await ids('?sortField=name'), ['d3', 'd1', 'd2', 'd4'])
  t.same(await ids('?sortField=Name&sortOrder=DESC'), ['d4', 'd2', 'd1', 'd3'])
  t.same(await ids('?sortField=network&sortOrder=desc'), ['d1', 'd3', 'd2', 'd4'])
  t.same(await ids('?sortField=DeviceType&sortOrder=DESC'), ['d2', 'd3', 'd1', 'd4'])
  t.same(await ids('?sortField=status&sortOrder=DESC'), ['d4', 'd3', 'd2', 'd1'])
  t.same(await ids('?take=2&skip=1'), ['d2', 'd3'])
  t.same(await ids('?take=0'), [])
  const all = await h.request('GET', '/device')
  t.same(all.body[0], { id: 'd1', name: 'Zeta', data: null, networkId: lab, deviceTypeId: 1, isBlocked: false, lastSeen: null, online: false }, 'list view')
  for (const bad of ['?sortField=id', '?sortField=bogus', '?take=-1', '?skip=-2', '?networkId=abc', '?take=1.5']) {
    const res = await h.request('GET', `/device${bad}`)
    t.same([res.status, res.body], [400, { error: 400, message: 'Invalid request parameters' }], bad)
  }
  t.same((await h.request('GET', '/device?sortOrder=nope')).body, { error: 400, message: 'Unparseable sort order : nope' })
})

t.test('get and delete a device', async (t) => {
  const h = await createTestApp(t)
  await registry(h).device('gone')
  const del = await h.request('DELETE', '/device/gone')
  t.same([del.status, del.text], [204, ''])
  for (const [method, id] of [['GET', 'gone'], ['DELETE', 'gone'], ['GET', 'x'.repeat(100)], ['GET', encodeURIComponent('a b')], ['DELETE', 'nope']] as const) {
    const res = await h.request(method, `/device/${id}`)
    t.same([res.status, res.body], [404, { error: 404, message: `Device with such deviceId = ${decodeURIComponent(id)} not found` }], `${method} ${id.slice(0, 10)}`)
  }
  t.equal((await h.request('GET', '/device/count')).status, 200, '/device/count is the count route')
  // Beyond the router's parameter limit Fastify refuses the path itself: a 4xx, never a 500.
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const huge = await h.request(method, `/device/${'x'.repeat(5000)}`, { body: method === 'PUT' ? { name: 'x' } : undefined })
    t.ok(huge.status >= 400 && huge.status < 500, `${method} huge id: ${huge.status}`)
  }
  t.same((await h.request('GET', '/device')).body, [], 'nothing was stored')
})
