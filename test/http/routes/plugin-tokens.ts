import t from 'tap'
import type { Test } from 'tap'
import { createTestApp } from '../../fixtures/app.js'
import type { TestApp, TestResponse } from '../../fixtures/app.js'
import type { Clock } from '../../../lib/core/time.js'

const HOUR = 3600 * 1000

async function register (h: TestApp, token: string = h.adminToken): Promise<{ topicName: string, accessToken: string, refreshToken: string }> {
  const res = await h.request('POST', '/plugin', { token, query: { returnCommands: 'true' }, body: { name: 'p' } })
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`)
  return res.body
}

function deny (t: Test, res: { status: number, body: unknown }, status: number, message: string, name?: string): void {
  t.same([res.status, res.body], [status, { error: status, message }], name ?? message)
}

t.test('round trip: create -> authenticate -> post the authenticate body back', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const { topicName } = await register(h, a.accessToken)
  const created = await h.request('POST', '/token/plugin/create', {
    token: a.accessToken,
    body: { tpc: topicName, a: [16], e: '2218-01-01T00:00:00.000', t: 1 }
  })
  t.equal(created.status, 201)
  t.same(Object.keys(created.body).sort(), ['accessToken', 'proxyEndpoint', 'refreshToken'])
  // inject() has no connection address, and the Host header is not used without trustProxy (#22).
  t.equal(created.body.proxyEndpoint, 'ws://localhost/api/plugin/proxy', 'the token answer names the proxy, as POST /plugin does')
  const e = Date.UTC(2218, 0, 1)
  t.same(h.hub.tokens.decode(created.body.accessToken), { tpc: topicName, a: [16], e, t: 1 })
  t.same(h.hub.tokens.decode(created.body.refreshToken), { tpc: topicName, a: [16], e, t: 0 })

  const auth = await h.request('GET', '/token/plugin/authenticate', { token: null, query: { token: created.body.accessToken } })
  t.equal(auth.status, 200)
  t.same(auth.body, { a: [16], e: '2218-01-01T00:00:00.000', t: 1, tpc: topicName })
  t.same(Object.keys(auth.body).sort(), ['a', 'e', 't', 'tpc'])

  const again = await h.request('POST', '/token/plugin/create', { token: a.accessToken, body: auth.body })
  t.equal(again.status, 201)
  t.same(h.hub.tokens.decode(again.body.accessToken), { tpc: topicName, a: [16], e, t: 1 })
  const authAgain = await h.request('GET', '/token/plugin/authenticate', { token: null, query: { token: again.body.accessToken } })
  t.same(authAgain.body, auth.body)

  // The registration token authenticates too; `e` is epoch ms inside, a timestamp outside.
  const reg = await register(h, a.accessToken)
  const regAuth = await h.request('GET', '/token/plugin/authenticate', { token: null, query: { token: reg.accessToken } })
  t.equal(regAuth.status, 200)
  t.match(regAuth.body.e, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/)
  t.same({ ...regAuth.body, e: '' }, { a: [16], e: '', t: 1, tpc: reg.topicName })
})

t.test('POST /token/plugin/create: defaults, epoch e, null a, admin wildcard', async (t) => {
  const h = await createTestApp(t)
  const { topicName } = await register(h)
  const res = await h.request('POST', '/token/plugin/create', { body: { tpc: topicName } })
  t.equal(res.status, 201)
  const access = h.hub.tokens.decode(res.body.accessToken)
  const refresh = h.hub.tokens.decode(res.body.refreshToken)
  t.same({ ...access, e: 0 }, { tpc: topicName, a: null, e: 0, t: 1 })
  t.ok(Math.abs(access.e - (Date.now() + HOUR / 2)) < 60_000, 'access: default 30 minutes')
  t.ok(Math.abs(refresh.e - (Date.now() + 182 * 24 * HOUR)) < 60_000, 'refresh: default 182 days')
  const auth = await h.request('GET', '/token/plugin/authenticate', { token: null, query: { token: res.body.accessToken } })
  t.same({ ...auth.body, e: '' }, { a: null, e: '', t: 1, tpc: topicName })

  const epoch = await h.request('POST', '/token/plugin/create', { body: { tpc: topicName, a: [0], e: 7258118400000 } })
  t.equal(epoch.status, 201)
  t.same(h.hub.tokens.decode(epoch.body.accessToken), { tpc: topicName, a: [0], e: 7258118400000, t: 1 })

  const wildcard = await h.request('POST', '/token/plugin/create', { body: { tpc: '*', a: [16] } })
  t.equal(wildcard.status, 201)
  t.equal((h.hub.tokens.decode(wildcard.body.accessToken) as { tpc: string }).tpc, '*')
})

t.test('POST /token/plugin/create: every error of §2.4', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const b = await h.createUser()
  const pa = await register(h, a.accessToken)
  const pAdmin = await register(h)
  const post = (token: string | null, body?: unknown): Promise<TestResponse> => h.request('POST', '/token/plugin/create', { token, body })

  deny(t, await post(null, { tpc: pa.topicName }), 401, 'Unauthorized', 'anonymous')
  deny(t, await post(a.refreshToken, { tpc: pa.topicName }), 401, 'Unauthorized', 'refresh token as bearer')
  const noManagePlugin = h.sign({ u: a.user.id, a: [2, 3], n: null, dt: null, e: Date.now() + HOUR, t: 1 })
  deny(t, await post(noManagePlugin, { tpc: pa.topicName }), 403, 'Access is denied', 'without ManagePlugin')
  deny(t, await post(pa.accessToken, { tpc: pa.topicName }), 409, 'Can not get current user.', 'plugin principal')

  deny(t, await post(a.accessToken, {}), 403, 'No permisions or invalid topic name', 'empty body object')
  deny(t, await post(a.accessToken), 403, 'No permisions or invalid topic name', 'no body')
  deny(t, await post(a.accessToken, { tpc: 'no_topic' }), 403, 'No permisions or invalid topic name', 'unknown topic')
  deny(t, await post(a.accessToken, { tpc: '' }), 403, 'No permisions or invalid topic name', 'empty topic')
  deny(t, await post(a.accessToken, { tpc: null }), 403, 'No permisions or invalid topic name', 'null topic')
  deny(t, await post(a.accessToken, { tpc: 5 }), 403, 'No permisions or invalid topic name', 'numeric topic')
  deny(t, await post(a.accessToken, { tpc: '*' }), 403, 'No permisions or invalid topic name', 'wildcard, client')
  deny(t, await post(b.accessToken, { tpc: pa.topicName }), 403, `User with id ${a.user.id} is not a plugin creator`, 'other owner')
  // Admins are not exempt; the id is the owner's.
  deny(t, await post(h.adminToken, { tpc: pa.topicName }), 403, `User with id ${a.user.id} is not a plugin creator`, 'admin, not owner')
  deny(t, await post(a.accessToken, { tpc: pAdmin.topicName }), 403, 'User with id 1 is not a plugin creator', 'client, admin plugin')

  // D1 spirit: a client cannot give its plugin actions it does not hold.
  deny(t, await post(a.accessToken, { tpc: pa.topicName, a: [0] }), 403, 'Access is denied', 'all actions')
  deny(t, await post(a.accessToken, { tpc: pa.topicName, a: [16, 12] }), 403, 'Access is denied', 'ManageUser')
  const narrow = h.sign({ u: a.user.id, a: [16], n: null, dt: null, e: Date.now() + HOUR, t: 1 })
  deny(t, await post(narrow, { tpc: pa.topicName, a: [] }), 403, 'Access is denied', 'client set from a narrow token')
  t.equal((await post(narrow, { tpc: pa.topicName, a: [16] })).status, 201)
  t.equal((await post(a.accessToken, { tpc: pa.topicName, a: [] })).status, 201, 'client set from a client login token')
  t.equal((await post(a.accessToken, { tpc: pa.topicName, a: [3, 4, 16] })).status, 201)

  const bad: Array<[unknown, string]> = [
    [{ tpc: pa.topicName, a: [999] }, 'unknown action id'],
    [{ tpc: pa.topicName, a: 'ManagePlugin' }, 'a is not an array'],
    [{ tpc: pa.topicName, a: ['ManagePlugin'] }, 'action names'],
    [{ tpc: pa.topicName, a: [1.5] }, 'fractional id'],
    [{ tpc: pa.topicName, e: 'tomorrow' }, 'bad e'],
    [{ tpc: pa.topicName, e: true }, 'boolean e'],
    [[1], 'array body']
  ]
  for (const [body, name] of bad) {
    const res = await post(a.accessToken, body)
    t.same([res.status, res.body], [400, { error: 400, message: 'Invalid request parameters' }], name)
  }
})

t.test('GET /token/plugin/authenticate: every 401 of §2.5', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const p = await register(h, a.accessToken)
  const get = (token?: string): Promise<TestResponse> =>
    h.request('GET', '/token/plugin/authenticate', { token: null, query: token === undefined ? undefined : { token } })

  deny(t, await get(), 401, 'Token is empty', 'missing')
  deny(t, await get(''), 401, 'Token is empty', 'empty')
  deny(t, await get('not-a-jwt'), 401, 'Token is not valid', 'garbage')
  deny(t, await get(p.accessToken.slice(0, -2) + 'xx'), 401, 'Token is not valid', 'bad signature')
  deny(t, await get(a.accessToken), 401, 'Token is not valid', 'user token')
  deny(t, await get(p.refreshToken), 401, 'Invalid token type', 'refresh token')
  deny(t, await get(h.sign({ tpc: p.topicName, a: [16], e: Date.now() - 1000, t: 1 })), 401, 'Token has expired', 'expired')
  deny(t, await get(h.sign({ tpc: 'plugin_topic_gone', a: [16], e: Date.now() + HOUR, t: 1 })), 401, 'Plugin is not found', 'unknown topic')
  deny(t, await get(h.sign({ tpc: '', a: [16], e: Date.now() + HOUR, t: 1 })), 401, 'Plugin is not found', 'empty topic')
  // The type check runs before the expiry check.
  deny(t, await get(h.sign({ tpc: p.topicName, a: [16], e: Date.now() - 1000, t: 0 })), 401, 'Invalid token type', 'expired refresh')

  // A bearer header is not needed, but a bad one is refused as everywhere.
  const badBearer = await h.request('GET', '/token/plugin/authenticate', { token: 'garbage', query: { token: p.accessToken } })
  deny(t, badBearer, 401, 'Unauthorized', 'bad bearer')

  // A locked owner's plugin no longer authenticates.
  await h.store.users.update(a.user.id, { status: 1 })
  deny(t, await get(p.accessToken), 401, 'Token is not valid', 'locked owner')
  await h.store.users.update(a.user.id, { status: 0 })
  t.equal((await get(p.accessToken)).status, 200)

  const repeated = await h.app.inject({ method: 'GET', url: `/api/rest/token/plugin/authenticate?token=${p.accessToken}&token=x` })
  t.equal(repeated.statusCode, 400, 'a repeated token parameter is a bad request, not a crash')
})

t.test('expiry: a token minted with a past e', async (t) => {
  const h = await createTestApp(t)
  const p = await register(h)
  const minted = await h.request('POST', '/token/plugin/create', { body: { tpc: p.topicName, a: [16], e: '2016-06-01T00:00:00.000' } })
  t.equal(minted.status, 201)
  deny(t, await h.request('GET', '/token/plugin/authenticate', { token: null, query: { token: minted.body.accessToken } }), 401, 'Token has expired')
  deny(t, await h.request('GET', '/plugin', { token: minted.body.accessToken }), 401, 'Token expired', 'REST bearer')
  deny(t, await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: minted.body.refreshToken } }), 401, 'Token has expired', 'refresh')
})

t.test('expiry with a moving clock', async (t) => {
  let now = Date.now()
  const clock: Clock = { now: () => now }
  const h = await createTestApp(t, { clock })
  const p = await register(h)
  t.equal((await h.request('GET', '/token/plugin/authenticate', { token: null, query: { token: p.accessToken } })).status, 200)
  now += HOUR
  deny(t, await h.request('GET', '/token/plugin/authenticate', { token: null, query: { token: p.accessToken } }), 401, 'Token has expired')
  const refreshed = await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: p.refreshToken } })
  t.equal(refreshed.status, 201)
  t.equal((await h.request('GET', '/token/plugin/authenticate', { token: null, query: { token: refreshed.body.accessToken } })).status, 200)
})

t.test('POST /token/refresh with plugin refresh tokens (§2.3)', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const p = await register(h, a.accessToken)
  const refresh = (refreshToken: string): Promise<TestResponse> => h.request('POST', '/token/refresh', { token: null, body: { refreshToken } })

  const res = await refresh(p.refreshToken)
  t.equal(res.status, 201)
  t.same(Object.keys(res.body), ['accessToken'])
  const access = h.hub.tokens.decode(res.body.accessToken)
  t.same({ ...access, e: 0 }, { tpc: p.topicName, a: [16], e: 0, t: 1 })
  t.ok(Math.abs(access.e - (Date.now() + HOUR / 2)) < 60_000, 'default access lifetime')
  t.equal((await h.request('GET', '/plugin', { token: res.body.accessToken })).status, 200, 'the new token works')

  // `a` is copied from the refresh token, whatever it is.
  const custom = h.sign({ tpc: p.topicName, a: [3, 16], e: Date.now() + HOUR, t: 0 })
  t.same((h.hub.tokens.decode((await refresh(custom)).body.accessToken) as { a: number[] }).a, [3, 16])

  // Any plugin status will do.
  await h.request('PUT', '/plugin', { query: { topicName: p.topicName, status: 'ACTIVE' } })
  t.equal((await refresh(p.refreshToken)).status, 201)

  deny(t, await refresh(p.accessToken), 401, 'Invalid token type', 'access token')
  deny(t, await refresh(h.sign({ tpc: p.topicName, a: [16], e: Date.now() - 1000, t: 0 })), 401, 'Token has expired', 'expired')
  deny(t, await refresh(h.sign({ tpc: '', a: [16], e: Date.now() + HOUR, t: 0 })), 401, 'No permisions or invalid topic name', 'empty topic')
  deny(t, await refresh(h.sign({ tpc: 'plugin_topic_none', a: [16], e: Date.now() + HOUR, t: 0 })), 401, 'Plugin is not found', 'unknown topic')
  deny(t, await refresh(p.refreshToken.slice(0, -2) + 'xx'), 401, 'Unauthorized', 'bad signature')

  t.equal((await h.request('DELETE', '/plugin', { query: { topicName: p.topicName } })).status, 204)
  deny(t, await refresh(p.refreshToken), 401, 'Plugin is not found', 'deleted plugin')
  deny(t, await h.request('GET', '/plugin', { token: res.body.accessToken }), 401, 'Unauthorized', 'its access token is dead too')
})

t.test('a plugin token never acts as a user token', async (t) => {
  const h = await createTestApp(t)
  const a = await h.createUser()
  const pAdmin = await register(h)
  const pClient = await register(h, a.accessToken)
  // Admin-owned plugin tokens with every action still mint no user tokens.
  const all = await h.request('POST', '/token/plugin/create', { body: { tpc: pAdmin.topicName, a: [0] } })
  t.equal(all.status, 201)
  for (const token of [all.body.accessToken, pAdmin.accessToken, pClient.accessToken]) {
    const res = await h.request('POST', '/token/create', { token, body: { userId: 1, actions: ['*'], networkIds: ['*'], deviceTypeIds: ['*'] } })
    t.equal(res.status, 403)
    t.same(res.body, { error: 403, message: 'Access is denied' })
  }
  deny(t, await h.request('POST', '/token/plugin/create', { token: all.body.accessToken, body: { tpc: pAdmin.topicName } }), 409, 'Can not get current user.')
  deny(t, await h.request('POST', '/plugin', { token: pClient.accessToken, body: { name: 'x' } }), 409, 'Can not get current user.')
  // A user's own refresh of a plugin token yields a plugin token, never a user one.
  const refreshed = await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: pAdmin.refreshToken } })
  t.notOk('u' in h.hub.tokens.decode(refreshed.body.accessToken))
})
