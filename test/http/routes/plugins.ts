import t from 'tap'
import { buildServer } from '../../../lib/http/build-server.js'
import { createTestApp } from '../../fixtures/app.js'
import type { TestApp, TestResponse } from '../../fixtures/app.js'

const TOPIC = /^plugin_topic_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const NO_FLAGS = "Requested subscription is not valid. Please, set at least one 'return*' parameter to true."

async function register (h: TestApp, token: string, query: Record<string, string> = { returnCommands: 'true' }, body: unknown = { name: 'p1' }): Promise<{ topicName: string, accessToken: string, refreshToken: string }> {
  const res = await h.request('POST', '/plugin', { token, query, body })
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`)
  return res.body
}

async function plugin (h: TestApp, topicName: string): Promise<Record<string, unknown>> {
  const res = await h.request('GET', '/plugin', { query: { topicName } })
  return res.body[0]
}

t.test('POST /plugin registers a CREATED plugin and returns its tokens and proxy endpoint', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const res = await h.request('POST', '/plugin', {
    token: a.accessToken,
    headers: { host: 'example.org:8080' },
    query: { returnCommands: 'true', returnNotifications: 'true', networkIds: '1', names: 'temp,hum', deviceId: 'd1' },
    body: { name: 'My plugin', description: 'desc', parameters: { b: 1, a: [2] } }
  })
  // Network 1 is not assigned to the user yet: nothing is created when a filter target is not
  // visible, and the client's (restricted) login token is told 403, as for any target (D7).
  t.same([res.status, res.body], [403, { error: 403, message: 'Access is denied' }])
  await h.store.users.assignNetwork(a.user.id, 1)
  const { accessToken } = await h.hub.tokens.issueForUser(a.user.id)
  const noDevice = await h.request('POST', '/plugin', { token: accessToken, query: { deviceId: 'd1' }, body: { name: 'p' } })
  t.same([noDevice.status, noDevice.body], [403, { error: 403, message: 'Access is denied' }])
  t.same((await h.request('GET', '/plugin/count')).body, { count: 0 })
  await h.store.devices.insert({ id: 'd1', name: 'd1', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  const created = await h.request('POST', '/plugin', {
    token: accessToken,
    headers: { host: 'example.org:8080' },
    query: { returnCommands: 'true', returnNotifications: 'true', networkIds: '1', names: 'temp,hum', deviceId: 'd1' },
    body: { name: 'My plugin', description: 'desc', parameters: { b: 1, a: [2] } }
  })
  t.equal(created.status, 201)
  t.same(Object.keys(created.body).sort(), ['accessToken', 'proxyEndpoint', 'refreshToken', 'topicName'])
  t.match(created.body.topicName, TOPIC)
  // The Host header is not used without trustProxy (#22); inject() has no connection address.
  t.equal(created.body.proxyEndpoint, 'ws://localhost/api/plugin/proxy')
  const access = h.hub.tokens.decode(created.body.accessToken)
  const refresh = h.hub.tokens.decode(created.body.refreshToken)
  t.same({ ...access, e: 0 }, { tpc: created.body.topicName, a: [16], e: 0, t: 1 })
  t.same({ ...refresh, e: 0 }, { tpc: created.body.topicName, a: [16], e: 0, t: 0 })
  t.ok(Math.abs(access.e - (Date.now() + 30 * 60 * 1000)) < 60_000)
  t.ok(Math.abs(refresh.e - (Date.now() + 182 * 24 * 3600 * 1000)) < 60_000)

  const list = await h.request('GET', '/plugin', { token: accessToken })
  t.equal(list.status, 200)
  t.same(list.body, [{
    id: list.body[0].id,
    name: 'My plugin',
    description: 'desc',
    topicName: created.body.topicName,
    filter: 'command,notification/1/*/d1/temp,hum',
    status: 'CREATED',
    subscriptionId: null,
    userId: a.user.id,
    parameters: { b: 1, a: [2] }
  }])
  t.equal(JSON.stringify(list.body[0].parameters), '{"b":1,"a":[2]}')

  const https = await h.request('POST', '/plugin', { token: a.accessToken, headers: { host: 'dh.example', 'x-forwarded-proto': 'https' }, query: {}, body: { name: 'x' } })
  t.equal(https.body.proxyEndpoint, 'ws://localhost/api/plugin/proxy', 'X-Forwarded-Proto is not used without trustProxy either')
  t.equal((await plugin(h, https.body.topicName)).filter, '*/*/*/*/*')
  t.equal((await plugin(h, https.body.topicName)).description, null)
})

t.test('filter string: kinds follow the return* flags', async (t) => {
  const h = await createTestApp(t)
  const cases: Array<[Record<string, string>, string]> = [
    [{}, '*/*/*/*/*'],
    [{ returnCommands: 'true' }, 'command/*/*/*/*'],
    [{ returnUpdatedCommands: 'true' }, 'command_update/*/*/*/*'],
    [{ returnNotifications: 'true', returnCommands: 'true', returnUpdatedCommands: 'true' }, 'command,command_update,notification/*/*/*/*'],
    [{ returnCommands: 'false', returnNotifications: 'true' }, 'notification/*/*/*/*'],
    // No flag true, one false: the missing ones count as true (as at subscription time).
    [{ returnCommands: 'false' }, 'command_update,notification/*/*/*/*'],
    [{ networkIds: '1, 1', deviceTypeIds: '1', returnNotifications: 'true' }, 'notification/1/1/*/*'],
    [{ names: 'a, b ,c', networkIds: '' }, '*/*/*/*/a,b,c']
  ]
  for (const [query, filter] of cases) {
    const { topicName } = await register(h, h.adminToken, query)
    t.equal((await plugin(h, topicName)).filter, filter, JSON.stringify(query))
  }
})

t.test('POST /plugin rejects bad input with 4xx and creates nothing', async (t) => {
  const h = await createTestApp(t)
  const bad: Array<[Record<string, string>, unknown, number, string]> = [
    [{ returnCommands: 'false', returnUpdatedCommands: 'false', returnNotifications: 'false' }, { name: 'p' }, 400, NO_FLAGS],
    [{ returnCommands: 'yes' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ returnCommands: '1' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ returnNotifications: 'maybe' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ networkIds: 'a,b' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ networkIds: '1,,2' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ networkIds: '1.5' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ deviceTypeIds: '-1' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ deviceTypeIds: '99999999999999999999' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ names: 'a/b' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ names: 'a,,b' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ deviceId: 'a/b' }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{ names: 'n'.repeat(1100) }, { name: 'p' }, 400, 'Invalid request parameters'],
    [{}, { description: 'no name' }, 400, 'Invalid request parameters'],
    [{}, { name: '' }, 400, 'Invalid request parameters'],
    [{}, { name: 'x'.repeat(129) }, 400, 'Invalid request parameters'],
    [{}, { name: 'p', description: 'd'.repeat(129) }, 400, 'Invalid request parameters'],
    [{}, { name: 'p', parameters: [1] }, 400, "'parameters' must be JSON Object!"],
    [{}, { name: 'p', parameters: 'text' }, 400, "'parameters' must be JSON Object!"],
    [{}, { name: { n: 1 } }, 400, 'Invalid request parameters'],
    [{}, undefined, 400, 'Error! Validation failed: Object is null'],
    [{ networkIds: '999' }, { name: 'p' }, 404, 'Network with id = 999 not found'],
    [{ deviceTypeIds: '999' }, { name: 'p' }, 404, 'Device type with id = 999 not found'],
    [{ deviceId: 'nope' }, { name: 'p' }, 404, 'Device with such deviceId = nope not found']
  ]
  for (const [query, body, status, message] of bad) {
    const res = await h.request('POST', '/plugin', { query, body })
    t.equal(res.status, status, JSON.stringify({ query, body }))
    t.same(res.body, { error: status, message }, JSON.stringify({ query, body }))
  }
  const invalidJson = await h.request('POST', '/plugin', { payload: '{"name":' })
  t.equal(invalidJson.status, 400)
  const array = await h.request('POST', '/plugin', { body: [1] })
  t.equal(array.status, 400)
  const repeated = await h.app.inject({ method: 'POST', url: '/api/rest/plugin?names=a&names=b', headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' }, payload: '{"name":"p"}' })
  t.equal(repeated.statusCode, 400)
  t.same((await h.request('GET', '/plugin/count')).body, { count: 0 })
})

t.test('filter targets must be visible to the caller (D7: 403 restricted, 404 full scope)', async (t) => {
  const h = await createTestApp(t)
  const net2 = await h.store.networks.insert({ name: 'Other', description: null })
  const dt2 = await h.store.deviceTypes.insert({ name: 'Other type', description: null })
  await h.store.devices.insert({ id: 'hidden', name: 'hidden', data: null, networkId: net2, deviceTypeId: 1, isBlocked: false })
  const a = await h.createUser({ networkIds: [1], allDeviceTypesAvailable: false, deviceTypeIds: [1] })
  // The client's login token lists its networks and device types: restricted, so 403 for what it
  // cannot see, whether or not it exists.
  const hidden: Array<Record<string, string>> = [
    { networkIds: `1,${net2}` }, { networkIds: '999' }, { deviceTypeIds: String(dt2) }, { deviceTypeIds: '999' },
    { deviceId: 'hidden' }, { deviceId: 'nowhere' }
  ]
  for (const query of hidden) {
    const res = await h.request('POST', '/plugin', { token: a.accessToken, query, body: { name: 'p' } })
    t.same([res.status, res.body], [403, { error: 403, message: 'Access is denied' }], JSON.stringify(query))
  }
  // A full-scope token of the same client: 404, as for a row outside its data scope.
  const wide = h.sign({ u: a.user.id, a: [16], n: ['*'], dt: ['*'], e: Date.now() + 60_000, t: 1 })
  const cases: Array<[Record<string, string>, string]> = [
    [{ networkIds: `1,${net2}` }, `Network with id = ${net2} not found`],
    [{ deviceTypeIds: String(dt2) }, `Device type with id = ${dt2} not found`],
    [{ deviceId: 'hidden' }, 'Device with such deviceId = hidden not found']
  ]
  for (const [query, message] of cases) {
    const res = await h.request('POST', '/plugin', { token: wide, query, body: { name: 'p' } })
    t.same([res.status, res.body], [404, { error: 404, message }], JSON.stringify(query))
  }
  // The admin sees them all, and gets 404 only for what does not exist.
  await register(h, h.adminToken, { networkIds: `1,${net2}`, deviceTypeIds: String(dt2), deviceId: 'hidden' })
  const missing = await h.request('POST', '/plugin', { query: { networkIds: '999' }, body: { name: 'p' } })
  t.same([missing.status, missing.body], [404, { error: 404, message: 'Network with id = 999 not found' }])
  // And the client may name its own.
  await register(h, a.accessToken, { networkIds: '1', deviceTypeIds: '1' })
  t.same((await h.request('GET', '/plugin/count', { token: a.accessToken })).body, { count: 1 }, 'refused registrations created nothing')
})

t.test('the /plugin endpoints need ManagePlugin', async (t) => {
  const h = await createTestApp(t)
  const noPlugin = h.sign({ u: 1, a: [2], n: ['*'], dt: ['*'], e: Date.now() + 60_000, t: 1 })
  const calls: Array<[string, string]> = [['GET', '/plugin'], ['GET', '/plugin/count'], ['POST', '/plugin'], ['PUT', '/plugin'], ['DELETE', '/plugin']]
  for (const [method, path] of calls) {
    const anonymous = await h.request(method, path, { token: null })
    t.same([anonymous.status, anonymous.body], [401, { error: 401, message: 'Unauthorized' }], `${method} ${path} anonymous`)
    const denied = await h.request(method, path, { token: noPlugin, body: { name: 'p' } })
    t.same([denied.status, denied.body], [403, { error: 403, message: 'Access is denied' }], `${method} ${path} without ManagePlugin`)
    const refresh = await h.request(method, path, { token: (await h.hub.tokens.issueForUser(1)).refreshToken })
    t.equal(refresh.status, 401, `${method} ${path} with a refresh token`)
  }
})

t.test('GET /plugin and /plugin/count: ownership, filters, sorting, paging', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const b = await h.createUser()
  const a1 = await register(h, a.accessToken, { returnCommands: 'true' }, { name: 'beta' })
  const a2 = await register(h, a.accessToken, { returnCommands: 'true' }, { name: 'alpha' })
  const b1 = await register(h, b.accessToken, { returnCommands: 'true' }, { name: 'gamma' })
  const admin1 = await register(h, h.adminToken, { returnCommands: 'true' }, { name: 'delta' })

  const names = async (token: string, query: Record<string, string | number> = {}): Promise<string[]> => {
    const res = await h.request('GET', '/plugin', { token, query })
    t.equal(res.status, 200, JSON.stringify(query))
    return res.body.map((p: { name: string }) => p.name)
  }
  const count = async (token: string, query: Record<string, string | number> = {}): Promise<number> => {
    const res = await h.request('GET', '/plugin/count', { token, query })
    t.equal(res.status, 200, JSON.stringify(query))
    return res.body.count
  }
  t.same(await names(a.accessToken), ['beta', 'alpha'])
  t.same(await names(b.accessToken), ['gamma'])
  t.same(await names(h.adminToken), ['beta', 'alpha', 'gamma', 'delta'])
  t.equal(await count(a.accessToken), 2)
  t.equal(await count(h.adminToken), 4)
  t.same(await names(a.accessToken, { userId: a.user.id }), ['beta', 'alpha'])
  t.same(await names(h.adminToken, { userId: b.user.id }), ['gamma'])
  t.equal(await count(h.adminToken, { userId: a.user.id }), 2)
  // B cannot look at A's plugins by topic either.
  t.same(await names(b.accessToken, { topicName: a1.topicName }), [])
  t.same(await names(h.adminToken, { topicName: b1.topicName }), ['gamma'])
  t.same(await names(h.adminToken, { name: 'alpha' }), ['alpha'])
  t.same(await names(h.adminToken, { namePattern: '%a' }), ['beta', 'alpha', 'gamma', 'delta'])
  t.same(await names(h.adminToken, { namePattern: 'd%' }), ['delta'])
  t.same(await names(h.adminToken, { sortField: 'name' }), ['alpha', 'beta', 'delta', 'gamma'])
  t.same(await names(h.adminToken, { sortField: 'NAME', sortOrder: 'desc' }), ['gamma', 'delta', 'beta', 'alpha'])
  t.same(await names(h.adminToken, { sortField: 'id', sortOrder: 'DESC' }), ['delta', 'gamma', 'alpha', 'beta'])
  t.same(await names(h.adminToken, { take: 2, skip: 1 }), ['alpha', 'gamma'])
  t.same(await names(h.adminToken, { take: 0 }), [])
  t.equal(await count(h.adminToken, { take: 1 }), 4)

  await h.request('PUT', '/plugin', { query: { topicName: a2.topicName, status: 'ACTIVE' } })
  await h.request('PUT', '/plugin', { query: { topicName: admin1.topicName, status: 'INACTIVE' } })
  t.same(await names(h.adminToken, { status: 0 }), ['alpha'])
  t.same(await names(h.adminToken, { status: 1 }), ['delta'])
  t.same(await names(h.adminToken, { status: 2 }), ['beta', 'gamma'])
  t.equal(await count(h.adminToken, { status: 2 }), 2)
  t.same(await names(a.accessToken, { status: 2 }), ['beta'])

  for (const path of ['/plugin', '/plugin/count']) {
    const other = await h.request('GET', path, { token: a.accessToken, query: { userId: b.user.id } })
    t.same([other.status, other.body], [403, { error: 403, message: 'No access to plugin' }], path)
    const badSort = await h.request('GET', path, { query: { sortField: 'topicName' } })
    t.same([badSort.status, badSort.body], [400, { error: 400, message: 'Invalid request parameters' }], path)
    const badOrder = await h.request('GET', path, { query: { sortOrder: 'up' } })
    t.same([badOrder.status, badOrder.body], [400, { error: 400, message: 'Unparseable sort order : up' }], path)
    const badQueries: Array<Record<string, string | number>> = [{ status: 'ACTIVE' }, { status: 7 }, { status: '1e30' }, { take: -1 }, { skip: 'x' }, { skip: '1e30' }, { skip: '99999999999999999999' }, { take: '1e30' }, { userId: 'me' }, { userId: '1e30' }]
    for (const query of badQueries) {
      const res = await h.request('GET', path, { query })
      t.same([res.status, res.body], [400, { error: 400, message: 'Invalid request parameters' }], `${path} ${JSON.stringify(query)}`)
    }
  }
})

t.test('GET /plugin caps take at the configured maximum (R10)', async (t) => {
  const h = await createTestApp(t, { limits: { maxTake: 2 } })
  for (let i = 0; i < 3; i++) await register(h, h.adminToken)
  t.equal((await h.request('GET', '/plugin')).body.length, 2)
  t.equal((await h.request('GET', '/plugin', { query: { take: 100 } })).body.length, 2)
  t.same((await h.request('GET', '/plugin/count')).body, { count: 3 })
})

t.test('PUT /plugin: status transitions and subscriptionId', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const { topicName } = await register(h, a.accessToken)
  const put = (query: Record<string, string>, token = a.accessToken): Promise<TestResponse> =>
    h.request('PUT', '/plugin', { token, query: { topicName, ...query } })

  const active = await put({ status: 'ACTIVE' })
  t.equal(active.status, 204)
  t.equal(active.text, '')
  let view = await plugin(h, topicName)
  t.equal(view.status, 'ACTIVE')
  t.ok(Number.isSafeInteger(view.subscriptionId) && (view.subscriptionId as number) > 0, 'ACTIVE has a subscription')
  const subscriptionId = view.subscriptionId
  // Staying ACTIVE keeps the subscription.
  t.equal((await put({ status: 'ACTIVE', name: 'renamed' })).status, 204)
  view = await plugin(h, topicName)
  t.same([view.status, view.subscriptionId, view.name], ['ACTIVE', subscriptionId, 'renamed'])

  t.equal((await put({ status: 'INACTIVE' })).status, 204)
  view = await plugin(h, topicName)
  t.same([view.status, view.subscriptionId], ['INACTIVE', null])
  t.equal((await put({ status: 'active' })).status, 204, 'status names are case-insensitive')
  t.equal((await plugin(h, topicName)).status, 'ACTIVE')

  const created = await put({ status: 'CREATED' })
  t.same([created.status, created.body], [400, { error: 400, message: 'Plugin status CREATED can not be set; use ACTIVE or INACTIVE' }])
  for (const status of ['RUNNING', '0', '']) {
    const res = await put({ status })
    t.same([res.status, res.body], [400, { error: 400, message: 'Invalid request parameters' }], status)
  }
  t.equal((await plugin(h, topicName)).status, 'ACTIVE', 'failed updates change nothing')
})

t.test('PUT /plugin: name, description, parameters and filter rules', async (t) => {
  const h = await createTestApp(t)
  const { topicName } = await register(h, h.adminToken, { returnCommands: 'true', names: 'x' }, { name: 'p', description: 'd', parameters: { k: 1 } })
  const put = (query: Record<string, string>): Promise<TestResponse> => h.request('PUT', '/plugin', { query: { topicName, ...query } })

  t.equal((await put({ name: 'n2', description: 'd2', parameters: '{"z":1,"a":2}' })).status, 204)
  let view = await plugin(h, topicName)
  t.same([view.name, view.description, view.parameters, view.filter], ['n2', 'd2', { z: 1, a: 2 }, 'command/*/*/*/x'])
  t.equal((await put({ parameters: 'null' })).status, 204)
  t.equal((await plugin(h, topicName)).parameters, null)

  // A filter change while CREATED or INACTIVE is fine: the given parameters replace the filter.
  t.equal((await put({ returnNotifications: 'true', networkIds: '1' })).status, 204)
  t.equal((await plugin(h, topicName)).filter, 'notification/1/*/*/*')
  t.equal((await put({ status: 'ACTIVE' })).status, 204)

  const locked = await put({ returnCommands: 'true' })
  t.same([locked.status, locked.body], [400, { error: 400, message: "Plugin's subscription filter can't be updated if plugin is ACTIVE" }])
  const stillActive = await put({ status: 'ACTIVE', returnCommands: 'true' })
  t.equal(stillActive.status, 400, 'ACTIVE to ACTIVE is not a status change')
  // As in DeviceHive, any filter parameter is a filter update, even one that rebuilds the same filter.
  const same = await put({ returnNotifications: 'true', networkIds: '1', name: 'same filter' })
  t.same([same.status, same.body.message], [400, "Plugin's subscription filter can't be updated if plugin is ACTIVE"])
  t.equal((await put({ name: 'same filter' })).status, 204, 'without filter parameters an ACTIVE plugin takes other changes')
  // Changing the filter together with the status is allowed.
  t.equal((await put({ status: 'INACTIVE', returnCommands: 'true' })).status, 204)
  view = await plugin(h, topicName)
  t.same([view.status, view.filter, view.subscriptionId], ['INACTIVE', 'command/*/*/*/*', null])

  const bad: Array<[Record<string, string>, number, string]> = [
    [{ returnCommands: 'false', returnUpdatedCommands: 'false', returnNotifications: 'false' }, 400, NO_FLAGS],
    [{ returnCommands: 'maybe' }, 400, 'Invalid request parameters'],
    [{ networkIds: 'x' }, 400, 'Invalid request parameters'],
    [{ networkIds: '999' }, 404, 'Network with id = 999 not found'],
    [{ name: '' }, 400, 'Invalid request parameters'],
    [{ name: 'n'.repeat(129) }, 400, 'Invalid request parameters'],
    [{ parameters: '[1]' }, 400, "'parameters' must be JSON Object!"],
    [{ parameters: '{oops' }, 400, 'Invalid request parameters']
  ]
  for (const [query, status, message] of bad) {
    const res = await put(query)
    t.same([res.status, res.body], [status, { error: status, message }], JSON.stringify(query))
  }
  view = await plugin(h, topicName)
  t.same([view.name, view.filter], ['same filter', 'command/*/*/*/*'])
})

t.test('PUT and DELETE /plugin: ownership between two users and an admin', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const b = await h.createUser()
  const pa = await register(h, a.accessToken)
  const missing = 'plugin_topic_00000000-0000-0000-0000-000000000000'

  for (const method of ['PUT', 'DELETE']) {
    const query: Record<string, string> = method === 'PUT' ? { status: 'ACTIVE' } : {}
    const notOwned = await h.request(method, '/plugin', { token: b.accessToken, query: { topicName: pa.topicName, ...query } })
    t.same([notOwned.status, notOwned.body], [403, { error: 403, message: 'No access to plugin' }], `${method} not owned`)
    const clientMissing = await h.request(method, '/plugin', { token: b.accessToken, query: { topicName: missing, ...query } })
    t.same([clientMissing.status, clientMissing.body], [403, { error: 403, message: 'No access to plugin' }], `${method} missing, client`)
    const adminMissing = await h.request(method, '/plugin', { query: { topicName: missing, ...query } })
    t.same([adminMissing.status, adminMissing.body], [404, { error: 404, message: 'Plugin is not found' }], `${method} missing, admin`)
    const noTopicAdmin = await h.request(method, '/plugin', { query })
    t.same([noTopicAdmin.status, noTopicAdmin.body], [404, { error: 404, message: 'Plugin is not found' }], `${method} no topic, admin`)
    const noTopicClient = await h.request(method, '/plugin', { token: a.accessToken, query })
    t.same([noTopicClient.status, noTopicClient.body], [403, { error: 403, message: 'No access to plugin' }], `${method} no topic, client`)
  }
  t.equal((await plugin(h, pa.topicName)).status, 'CREATED')

  // The admin manages any plugin; the owner manages its own.
  t.equal((await h.request('PUT', '/plugin', { query: { topicName: pa.topicName, status: 'ACTIVE' } })).status, 204)
  t.equal((await h.request('PUT', '/plugin', { token: a.accessToken, query: { topicName: pa.topicName, status: 'INACTIVE' } })).status, 204)
  t.equal((await plugin(h, pa.topicName)).status, 'INACTIVE')
  const del = await h.request('DELETE', '/plugin', { token: a.accessToken, query: { topicName: pa.topicName } })
  t.same([del.status, del.text], [204, ''])
  t.equal(await h.store.plugins.findByTopic(pa.topicName), undefined)
  const again = await h.request('DELETE', '/plugin', { token: a.accessToken, query: { topicName: pa.topicName } })
  t.same([again.status, again.body.message], [403, 'No access to plugin'])

  const pb = await register(h, b.accessToken)
  t.equal((await h.request('DELETE', '/plugin', { query: { topicName: pb.topicName } })).status, 204, 'admin deletes any plugin')
  t.same((await h.request('GET', '/plugin/count')).body, { count: 0 })
})

t.test('a plugin token manages only its own plugin', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const mine = await register(h, a.accessToken, { returnCommands: 'true' }, { name: 'mine' })
  const other = await register(h, a.accessToken, { returnCommands: 'true' }, { name: 'other' })

  const list = await h.request('GET', '/plugin', { token: mine.accessToken })
  t.same([list.status, list.body.map((p: { name: string }) => p.name)], [200, ['mine']])
  t.same((await h.request('GET', '/plugin', { token: mine.accessToken, query: { topicName: other.topicName } })).body, [])
  t.same((await h.request('GET', '/plugin/count', { token: mine.accessToken })).body, { count: 1 })

  const create = await h.request('POST', '/plugin', { token: mine.accessToken, body: { name: 'child' } })
  t.same([create.status, create.body], [409, { error: 409, message: 'Can not get current user.' }])

  // PUT addresses the caller's own plugin, whatever topicName says.
  t.equal((await h.request('PUT', '/plugin', { token: mine.accessToken, query: { topicName: other.topicName, status: 'ACTIVE' } })).status, 204)
  t.equal((await plugin(h, mine.topicName)).status, 'ACTIVE')
  t.equal((await plugin(h, other.topicName)).status, 'CREATED')
  t.equal((await h.request('DELETE', '/plugin', { token: mine.accessToken, query: { topicName: other.topicName } })).status, 204)
  t.equal(await h.store.plugins.findByTopic(mine.topicName), undefined)
  t.ok(await h.store.plugins.findByTopic(other.topicName))
  // Its topic is gone, so the token no longer authenticates.
  const after = await h.request('GET', '/plugin', { token: mine.accessToken })
  t.same([after.status, after.body], [401, { error: 401, message: 'Unauthorized' }])
})

t.test('plugin tokens: a locked owner or a deleted plugin ends them', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const p = await register(h, a.accessToken)
  t.equal((await h.request('GET', '/plugin', { token: p.accessToken })).status, 200)
  await h.store.users.update(a.user.id, { status: 1 })
  const locked = await h.request('GET', '/plugin', { token: p.accessToken })
  t.same([locked.status, locked.body], [401, { error: 401, message: 'Unauthorized' }])
})

t.test('proxyEndpoint is the plugin proxy beside /info\'s WebSocket URL; a configured URL and another base path', async (t) => {
  const h = await createTestApp(t)
  const fixed = await buildServer({ hub: h.hub, closeHub: false, webSocketUrl: 'wss://push.example/ws', pluginProxy: { url: 'wss://push.example/plugins' } })
  const other = await buildServer({ hub: h.hub, closeHub: false, basePath: '/dh/rest' })
  t.teardown(async () => {
    await fixed.close()
    await other.close()
  })
  const headers = { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json', host: 'example.org' }
  const cases = [
    [fixed, '/api/rest', 'wss://push.example/ws', 'wss://push.example/plugins'],
    [other, '/dh/rest', 'ws://localhost/dh/websocket', 'ws://localhost/dh/plugin/proxy']
  ] as const
  for (const [app, base, webSocket, proxy] of cases) {
    const info = await app.inject({ method: 'GET', url: `${base}/info`, headers: { host: 'example.org' } })
    const res = await app.inject({ method: 'POST', url: `${base}/plugin`, headers, payload: '{"name":"p"}' })
    t.equal(res.statusCode, 201)
    t.equal(res.json().proxyEndpoint, proxy)
    t.equal(info.json().webSocketServerUrl, webSocket)
  }
})
