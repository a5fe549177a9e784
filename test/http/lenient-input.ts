/**
 * R12 over HTTP: what DeviceHive clients send (nulls for absent options, a single name for a
 * list, Python's True/False, ids as digit strings) works, values of the wrong kind still answer
 * 400, and no leniency lets a caller do more than the strict form would.
 */
import t from 'tap'
import { Action } from '../../lib/core/auth/actions.js'
import { createTestApp } from '../fixtures/app.js'
import { registry } from '../fixtures/registry.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const decodeJwtPayload = (token: string): any => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).payload
const DENIED = { error: 403, message: 'Access is denied' }
const INVALID = { error: 400, message: 'Invalid request parameters' }

t.test('POST /token/create: nulls are absent options, a single action name is a list, ids may be digit strings', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({ networkIds: [1] })
  const id = client.user.id
  const res = await h.request('POST', '/token/create', {
    body: { userId: id, actions: ['GetDevice'], networkIds: [1], deviceTypeIds: null, expiration: null, refreshExpiration: null, tokenType: null }
  })
  t.equal(res.status, 201, 'the body the Python and JavaScript clients build')
  t.same(decodeJwtPayload(res.body.accessToken), { u: id, a: [3], n: ['1'], dt: null, e: decodeJwtPayload(res.body.accessToken).e, t: 1 })

  const single = await h.request('POST', '/token/create', { body: { userId: String(id), actions: 'RegisterDevice', networkIds: '1' } })
  t.equal(single.status, 201)
  const payload = decodeJwtPayload(single.body.accessToken)
  t.same([payload.u, payload.a, payload.n], [id, [6], ['1']])

  const none = await h.request('POST', '/token/create', { body: { userId: id, actions: null, networkIds: null } })
  t.same(decodeJwtPayload(none.body.accessToken).a, [1], 'actions: null is NONE, as when absent')
  t.same(decodeJwtPayload(none.body.accessToken).n, null)

  // Wrong kinds still answer 400.
  for (const body of [
    { userId: 'two', actions: ['GetDevice'] },
    { userId: { id }, actions: ['GetDevice'] },
    { userId: id, networkIds: 'abc' },
    { userId: id, networkIds: { id: 1 } },
    { userId: id, expiration: 'soon' }
  ]) {
    const bad = await h.request('POST', '/token/create', { body })
    t.equal(bad.status, 400, JSON.stringify(body))
  }
  t.same((await h.request('POST', '/token/create', { body: { userId: id, actions: { x: 1 } } })).body,
    { error: 400, message: 'Actions list should contain only Strings or Integers' })
  t.same((await h.request('POST', '/token/create', { body: { userId: null } })).status, 400, 'a null userId is a missing one')
})

t.test('POST /token/create leniencies grant nothing D1 refuses', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({ networkIds: [1] })
  const other = await h.createUser({ networkIds: [1] })
  const token = client.accessToken
  const cases: unknown[] = [
    { userId: String(other.user.id), actions: 'GetDevice' },
    { userId: client.user.id, actions: '*' },
    { userId: client.user.id, actions: 'ManageUser', networkIds: null },
    { userId: client.user.id, actions: 'GetDevice', networkIds: '*' },
    { userId: client.user.id, actions: 'GetDevice', networkIds: '2' },
    { userId: String(client.user.id), actions: ['GetDevice'], deviceTypeIds: null, expiration: String(Date.now() + 365 * 86_400_000) }
  ]
  for (const body of cases) {
    t.same((await h.request('POST', '/token/create', { token, body })).body, DENIED, JSON.stringify(body))
  }
  // Within its own rights the same lenient body works for the client.
  const own = await h.request('POST', '/token/create', { token, body: { userId: String(client.user.id), actions: 'GetDevice', networkIds: '1', deviceTypeIds: null } })
  t.equal(own.status, 201)
})

t.test('query booleans are case-insensitive; anything else is still 400', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net = await r.network('Doomed')
  await r.device('inside', { networkId: net })
  const keep = await h.request('DELETE', `/network/${net}`, { query: { force: 'False' } })
  t.same([keep.status, keep.body.message], [400, 'There are the following devices within this network: inside. Please review and delete them first.'], 'force=False')
  t.same((await h.request('DELETE', `/network/${net}`, { query: { force: 'maybe' } })).body, INVALID, 'force=maybe')
  t.equal((await h.request('DELETE', `/network/${net}`, { query: { force: 'TRUE' } })).status, 204, 'force=TRUE')
  t.equal((await h.request('GET', '/device/inside')).status, 404, 'cascaded')

  await r.device('poller')
  const command = (await h.request('POST', '/device/poller/command', { body: { command: 'c' } })).body.id
  t.equal((await h.request('PUT', `/device/poller/command/${command}`, { body: { status: 'Done' } })).status, 204)
  const polled = await h.request('GET', '/device/poller/command/poll', { query: { returnUpdatedCommands: 'True', timestamp: '2000-01-01', waitTimeout: 0 } })
  t.same(polled.body.map((c: { id: number }) => c.id), [command], 'returnUpdatedCommands=True')
  const get = await h.request('GET', `/device/poller/command/${command}`, { query: { returnUpdatedCommands: 'TRUE' } })
  t.equal(get.status, 200)
  t.same((await h.request('GET', '/device/poller/command/poll', { query: { returnUpdatedCommands: 'yes', waitTimeout: 0 } })).body, INVALID)
})

t.test('query booleans grant nothing the lower-case form would not', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const mine = await r.network('Mine')
  const theirs = await r.network('Theirs')
  await r.device('theirs-1', { networkId: theirs })
  const client = await h.createUser({ networkIds: [mine] })
  const manager = r.token(client.user.id, [Action.ManageNetwork, Action.GetDeviceCommand], [String(mine)], ['*'])
  t.same((await h.request('DELETE', `/network/${theirs}`, { token: manager, query: { force: 'True' } })).body, DENIED)
  t.same((await h.request('DELETE', `/network/${theirs}`, { token: client.accessToken, query: { force: 'TRUE' } })).body, DENIED, 'no ManageNetwork')
  t.same((await h.request('GET', '/device/theirs-1/command/poll', { token: manager, query: { returnUpdatedCommands: 'True', waitTimeout: 0 } })).body, DENIED)
  t.ok(await h.store.networks.findById(theirs), 'still there')
})

t.test('PUT /device: nulls, digit-string ids and boolean text; wrong kinds are 400; no extra network', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net = await r.network('Lab')
  const other = await r.network('Other')
  t.equal((await h.request('PUT', '/device/d-1', { body: { name: 'd', networkId: String(net), deviceTypeId: '1', isBlocked: 'TRUE', data: null } })).status, 204)
  t.same((await h.request('GET', '/device/d-1')).body, { id: 'd-1', name: 'd', data: null, networkId: net, deviceTypeId: 1, isBlocked: true, lastSeen: null, online: false })
  t.equal((await h.request('PUT', '/device/d-1', { body: { name: null, networkId: null, deviceTypeId: null, isBlocked: null } })).status, 204, 'nulls change nothing')
  t.same((await h.request('GET', '/device/d-1')).body, { id: 'd-1', name: 'd', data: null, networkId: net, deviceTypeId: 1, isBlocked: true, lastSeen: null, online: false })
  for (const body of [{ name: 'd', networkId: 'lab' }, { name: 'd', networkId: { id: net } }, { name: 'd', isBlocked: 'maybe' }, { name: 'd', networkId: '1.5' }]) {
    t.same((await h.request('PUT', '/device/d-1', { body })).body, INVALID, JSON.stringify(body))
  }
  const client = await h.createUser({ networkIds: [net] })
  const res = await h.request('PUT', '/device/d-2', { token: client.accessToken, body: { name: 'x', networkId: String(other) } })
  t.same(res.body, { error: 403, message: 'No access to network!' }, 'a digit string names the same network as the number')
})

t.test('PUT /user/current: nulls leave fields alone and open no admin-only field', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({ data: { a: 1 } })
  const token = client.accessToken
  t.equal((await h.request('PUT', '/user/current', { token, body: { login: null, role: null, status: null, password: null, introReviewed: 'True' } })).status, 204)
  const user = await h.store.users.findById(client.user.id)
  t.same([user?.login, user?.role, user?.status, user?.introReviewed, user?.passwordHash], [client.user.login, 1, 0, true, client.user.passwordHash])
  for (const body of [{ role: '0' }, { role: 0 }, { status: '1' }]) {
    t.equal((await h.request('PUT', '/user/current', { token, body })).status, 403, JSON.stringify(body))
  }
  t.equal((await h.store.users.findById(client.user.id))?.role, 1)
})

t.test('query ids as digit strings are the same ids', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net = await r.network('Q')
  await r.device('q-1', { networkId: net })
  t.same((await h.request('GET', '/device', { query: { networkId: String(net) } })).body.map((d: { id: string }) => d.id), ['q-1'])
  t.same((await h.request('GET', '/device', { query: { networkId: 'Q' } })).body, INVALID)
})

t.test('a query key without a value (how JavaScript clients write null) is an absent parameter', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net = await r.network('Kept')
  await r.device('kept-1', { networkId: net })
  const list = await h.app.inject({ method: 'GET', url: '/api/rest/network?take&skip=&sortOrder=ASC', headers: { authorization: `Bearer ${h.adminToken}` } })
  t.same(list.json().map((n: { id: number }) => n.id), [1, net])
  const kept = await h.app.inject({ method: 'DELETE', url: `/api/rest/network/${net}?force`, headers: { authorization: `Bearer ${h.adminToken}` } })
  t.equal(kept.statusCode, 400, 'force without a value is not force')
  t.ok(await h.store.networks.findById(net))
  const count = await h.app.inject({ method: 'GET', url: '/api/rest/device/count?networkId=', headers: { authorization: `Bearer ${h.adminToken}` } })
  t.same(count.json(), { count: 1 })
})
