import t from 'tap'
import { createTestApp, ADMIN_PASSWORD } from '../../fixtures/app.js'
import { createJwtCodec } from '../../../lib/core/auth/jwt.js'
import { CLIENT_ACTIONS } from '../../../lib/core/auth/actions.js'
import { legacyPasswordHash } from '../../../lib/core/auth/passwords.js'

const decode = (token: string): any => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).payload // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('POST /token logs in and returns a token pair with login claims', async (t) => {
  const h = await createTestApp(t)
  const res = await h.request('POST', '/token', { token: null, body: { login: 'dhadmin', password: ADMIN_PASSWORD } })
  t.equal(res.status, 201)
  t.same(Object.keys(res.body).sort(), ['accessToken', 'refreshToken'])
  const access = decode(res.body.accessToken)
  t.match(access, { u: 1, a: [0], n: ['*'], dt: ['*'], t: 1 })
  t.ok(Math.abs(access.e - (Date.now() + 30 * 60_000)) < 10_000, 'access lifetime 30 minutes')
  const refresh = decode(res.body.refreshToken)
  t.match(refresh, { u: 1, a: [0], n: ['*'], dt: ['*'], t: 0 })
  t.ok(Math.abs(refresh.e - (Date.now() + 182 * 86_400_000)) < 10_000, 'refresh lifetime 182 days')
  const user = await h.store.users.findById(1)
  t.not(user!.lastLogin, null, 'lastLogin set')

  const client = await h.createUser({ login: 'client-one', password: 'client-pass', networkIds: [1], allDeviceTypesAvailable: false, deviceTypeIds: [1] })
  const clientLogin = await h.request('POST', '/token', { token: null, body: { login: 'client-one', password: 'client-pass' } })
  t.equal(clientLogin.status, 201)
  t.match(decode(clientLogin.body.accessToken), { u: client.user.id, a: [...CLIENT_ACTIONS], n: ['1'], dt: ['1'], t: 1 })
})

t.test('POST /token accepts a numeric password and a body without Content-Type', async (t) => {
  const h = await createTestApp(t)
  await h.createUser({ login: 'numeric', password: '111111' })
  const res = await h.app.inject({ method: 'POST', url: '/api/rest/token', payload: '{"login":"numeric","password":111111}' })
  t.equal(res.statusCode, 201)
})

t.test('POST /token errors, in the contract order', async (t) => {
  const h = await createTestApp(t)
  const locked = await h.createUser({ login: 'locked-user', status: 1 })
  const cases: Array<[unknown, number, string]> = [
    [undefined, 400, 'Error! Validation failed: Object is null'],
    [{}, 400, 'Invalid or empty authorization request parameters'],
    [{ login: '  ', password: 'x' }, 400, 'Invalid or empty authorization request parameters'],
    [{ login: 'dhadmin' }, 400, 'Invalid or empty authorization request parameters'],
    [{ login: 'dhadmin', password: '' }, 400, 'Invalid or empty authorization request parameters'],
    // #16: an unknown login and a wrong password read the same; the status only after the right password.
    [{ login: 'nobody', password: 'whatever' }, 401, 'Invalid credentials'],
    [{ login: locked.user.login, password: 'wrong-password' }, 401, 'Invalid credentials'],
    [{ login: locked.user.login, password: locked.password }, 401, 'User is locked or disabled'],
    [{ login: 'dhadmin', password: 'wrong-password' }, 401, 'Invalid credentials'],
    [{ login: { name: 'dhadmin' }, password: 'x' }, 400, 'Invalid request parameters'],
    [[1, 2], 400, 'Invalid request parameters']
  ]
  for (const [body, status, message] of cases) {
    const res = await h.request('POST', '/token', { token: null, body })
    t.same(res.body, { error: status, message }, JSON.stringify(body) ?? 'no body')
    t.equal(res.status, status)
  }
  const bad = await h.request('POST', '/token', { token: null, payload: '{"login":' })
  t.same(bad.body, { error: 400, message: 'Invalid request parameters' }, 'malformed JSON')
})

t.test('failed logins lock the user at user.login.maxAttempts', async (t) => {
  const h = await createTestApp(t)
  await h.store.configuration.put('user.login.maxAttempts', '3')
  const { user } = await h.createUser({ login: 'tries', password: 'right-password' })
  for (let i = 1; i <= 3; i++) {
    const res = await h.request('POST', '/token', { token: null, body: { login: 'tries', password: 'bad-password' } })
    t.same(res.body, { error: 401, message: 'Invalid credentials' }, `attempt ${i}`)
  }
  const after = await h.store.users.findById(user.id)
  t.equal(after!.status, 1, 'locked out')
  t.equal(after!.loginAttempts, 0, 'counter reset')
  const res = await h.request('POST', '/token', { token: null, body: { login: 'tries', password: 'right-password' } })
  t.same(res.body, { error: 401, message: 'User is locked or disabled' })
})

t.test('a successful login resets the counter and upgrades a legacy hash (D5)', async (t) => {
  const h = await createTestApp(t)
  const { user } = await h.createUser({ login: 'legacy-user' })
  await h.store.users.update(user.id, { passwordHash: legacyPasswordHash('sjQbZgcCmFxqTV4CCmGwpIHO', 'DFXFrZ8VQIkOYECScBbBwsYinj+o8IlaLsRQ81wO+l8='), loginAttempts: 2 })
  const res = await h.request('POST', '/token', { token: null, body: { login: 'legacy-user', password: 'dhadmin_#911' } })
  t.equal(res.status, 201)
  const after = await h.store.users.findById(user.id)
  t.match(after!.passwordHash, /^scrypt\$/, 'upgraded to scrypt')
  t.equal(after!.loginAttempts, 0)
  const again = await h.request('POST', '/token', { token: null, body: { login: 'legacy-user', password: 'dhadmin_#911' } })
  t.equal(again.status, 201, 'the upgraded hash verifies')
})

t.test('POST /token/create by an admin follows the contract (§2.2)', async (t) => {
  const h = await createTestApp(t)
  const { user } = await h.createUser()
  const res = await h.request('POST', '/token/create', { body: { userId: user.id, actions: ['GetNetwork', 'getdevice', 5, '*', 'Unknown', 99], networkIds: [1, '2'], deviceTypeIds: ['*'], expiration: '2030-01-01T00:00:00.000' } })
  t.equal(res.status, 201)
  const access = decode(res.body.accessToken)
  t.same(access, { u: user.id, a: [2, 3, 5, 0], n: ['1', '2'], dt: ['*'], e: Date.UTC(2030, 0, 1), t: 1 })
  t.equal(decode(res.body.refreshToken).e, Date.UTC(2030, 0, 1), 'refresh takes expiration when refreshExpiration is absent')

  const none = await h.request('POST', '/token/create', { body: { userId: user.id } })
  t.same(decode(none.body.accessToken), { ...decode(none.body.accessToken), a: [1], n: null, dt: null }, 'absent actions -> NONE, absent ids -> null')
  const both = await h.request('POST', '/token/create', { body: { userId: user.id, expiration: 1464793290564, refreshExpiration: '2031-01-01' } })
  t.equal(decode(both.body.accessToken).e, 1464793290564, 'past dates accepted')
  t.equal(decode(both.body.refreshToken).e, Date.UTC(2031, 0, 1))

  const cases: Array<[unknown, number, string | RegExp]> = [
    [{}, 400, /userId/],
    [{ userId: 999999 }, 404, 'User with id = 999999 not found'],
    [{ userId: user.id, actions: [1.5] }, 400, 'Actions list should contain only Strings or Integers'],
    [{ userId: user.id, actions: [{}] }, 400, 'Actions list should contain only Strings or Integers'],
    [{ userId: user.id, expiration: 'soon' }, 400, 'Invalid request parameters'],
    [{ userId: 'abc' }, 400, 'Invalid request parameters']
  ]
  for (const [body, status, message] of cases) {
    const r = await h.request('POST', '/token/create', { body })
    t.equal(r.status, status, JSON.stringify(body))
    t.match(r.body.message, message)
  }
  await h.store.users.update(user.id, { status: 2 })
  const disabled = await h.request('POST', '/token/create', { body: { userId: user.id } })
  t.same(disabled.body, { error: 403, message: 'User is locked or disabled' })
  t.equal((await h.store.users.findById(user.id))!.lastLogin, null, 'creating tokens does not touch lastLogin')
})

t.test('POST /token/create: auth and D1 escalation refusals', async (t) => {
  const h = await createTestApp(t)
  const anonymous = await h.request('POST', '/token/create', { token: null, body: { userId: 1 } })
  t.same(anonymous.body, { error: 401, message: 'Unauthorized' })
  const { refreshToken } = await h.hub.tokens.issueForUser(1)
  t.same((await h.request('POST', '/token/create', { token: refreshToken, body: { userId: 1 } })).body, { error: 401, message: 'Unauthorized' }, 'refresh token as bearer')

  const network = await h.store.networks.insert({ name: 'second', description: null })
  const client = await h.createUser({ networkIds: [1] })
  const e = Date.now() + 60 * 60_000
  const noManageToken = h.sign({ u: client.user.id, a: [2, 3], n: ['1'], dt: ['*'], e, t: 1 })
  t.same((await h.request('POST', '/token/create', { token: noManageToken, body: { userId: client.user.id } })).body, { error: 403, message: 'Access is denied' })

  const limited = h.sign({ u: client.user.id, a: [2, 3, 15], n: ['1'], dt: ['*'], e, t: 1 })
  const refusals: Array<[string, object]> = [
    ['the admin, with everything (the DeviceHive test case)', { userId: 1, actions: ['*'], networkIds: ['*'], deviceTypeIds: ['*'] }],
    ['another user', { userId: 1, actions: ['GetNetwork'] }],
    ['an action it does not hold', { userId: client.user.id, actions: ['ManageUser'] }],
    ['all actions', { userId: client.user.id, actions: ['*'] }],
    ['the default client set', { userId: client.user.id, actions: [] }],
    ['a network it does not hold', { userId: client.user.id, actions: ['GetNetwork'], networkIds: [String(network)] }],
    ['all networks', { userId: client.user.id, actions: ['GetNetwork'], networkIds: ['*'] }],
    ['a later expiration', { userId: client.user.id, actions: ['GetNetwork'], expiration: e + 60_000 }],
    ['a later refresh expiration', { userId: client.user.id, actions: ['GetNetwork'], refreshExpiration: e + 60_000 }]
  ]
  for (const [name, body] of refusals) {
    const r = await h.request('POST', '/token/create', { token: limited, body })
    t.same(r.body, { error: 403, message: 'Access is denied' }, name)
  }
  const allowed = await h.request('POST', '/token/create', { token: limited, body: { userId: client.user.id, actions: ['GetNetwork', 'ManageToken'], networkIds: ['1'] } })
  t.equal(allowed.status, 201, 'a subset of its own rights is fine')
  const access = decode(allowed.body.accessToken)
  t.match(access, { u: client.user.id, a: [2, 15], n: ['1'], dt: null, t: 1 })
  t.ok(access.e <= e && access.e > Date.now() + 29 * 60_000, 'access keeps its default lifetime below the caller\'s expiry')
  t.equal(decode(allowed.body.refreshToken).e, e, 'the refresh default is capped at the caller\'s own expiry')
})

t.test('POST /token/refresh (§2.3) and the DeviceHive test tokens', async (t) => {
  // The tests' tokens are signed with `devicehive` and expired in 2019: use an injected clock (D2).
  const clock = { now: () => Date.UTC(2018, 5, 1) }
  const h = await createTestApp(t, { clock, jwtSecret: 'devicehive', jwtKeyDerivation: 'devicehive' })
  const ADMIN_REFRESH = 'eyJhbGciOiJIUzI1NiJ9.eyJwYXlsb2FkIjp7InUiOjEsImEiOlswXSwibiI6WyIqIl0sImR0IjpbIioiXSwiZSI6MTU1OTM0NzIwMDAwMCwidCI6MH19.FhgGiIFMl7PSiaHMXGFlJTMKUyjA_JXjU_Qk2pjGna4'
  const ADMIN_REFRESH_EXP = 'eyJhbGciOiJIUzI1NiJ9.eyJwYXlsb2FkIjp7InUiOjEsImEiOlswXSwibiI6WyIqIl0sImR0IjpbIioiXSwiZSI6MTQ2NDc5MzI5MDU2NCwidCI6MH19.NdKR2zLvBeMuvGEDf4BC7a8YxqdvdKjnqIKdFn2KpJU'
  const ADMIN_REFRESH_INVALID = 'eyJhbGciOiJIUzI1NiJ9.eyJwYXlsb2FkIjp7InUiOjEsImEiOlswXSwibiI6WyIqIl0sImQiOlsiKiJdLCJlIjoxNTE0NzY0ODAwMDAwLCJ0IjoxfX0.dkA2H1MGmJHdAT382tqt-xhcmwwlTimGwnabS5HdfJc'
  const ADMIN_REFRESH_INVALID_SIGNATURE = 'eyJhbGciOiJIUzI1NiJ9.eyJwYXlsb2FkIjp7InUiOjEsImEiOlswXSwibiI6WyIqIl0sImQiOlsiKiJdLCJlIjoxNTU5MzQ3MjAwMDAwLCJ0IjowfX0.lo2T-wbXe1J9DvVyxJtFkNlo76uH_kSVwVY-FxLZRkk'

  const ok = await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: ADMIN_REFRESH } })
  t.equal(ok.status, 201)
  t.same(Object.keys(ok.body), ['accessToken'])
  t.same(createJwtCodec('devicehive', 'devicehive').decode(ok.body.accessToken), { u: 1, a: [0], n: ['*'], dt: ['*'], e: clock.now() + 30 * 60_000, t: 1 })
  t.not((await h.store.users.findById(1))!.lastLogin, null, 'refresh sets lastLogin')

  const cases: Array<[unknown, number, string]> = [
    [{ refreshToken: ADMIN_REFRESH_EXP }, 401, 'Token has expired'],
    [{ refreshToken: ADMIN_REFRESH_INVALID }, 401, 'Invalid token type'],
    [{ refreshToken: ADMIN_REFRESH_INVALID_SIGNATURE }, 401, 'Unauthorized'],
    [{ refreshToken: 'garbage' }, 401, 'Unauthorized'],
    [{}, 400, 'Missing or invalid payload in request'],
    [{ refreshToken: 42 }, 400, 'Missing or invalid payload in request'],
    [undefined, 400, 'Missing or invalid payload in request']
  ]
  for (const [body, status, message] of cases) {
    t.same((await h.request('POST', '/token/refresh', { token: null, body })).body, { error: status, message }, JSON.stringify(body) ?? 'no body')
  }
  await h.store.users.update(1, { status: 1 })
  t.same((await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: ADMIN_REFRESH } })).body, { error: 401, message: 'Unauthorized' }, 'locked user')
})

t.test('create -> refresh round trip keeps the claims', async (t) => {
  const h = await createTestApp(t)
  const { user } = await h.createUser()
  const created = await h.request('POST', '/token/create', { body: { userId: user.id, actions: ['GetDevice'], networkIds: ['1'], deviceTypeIds: ['1'] } })
  const refreshed = await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: created.body.refreshToken } })
  t.equal(refreshed.status, 201)
  t.match(decode(refreshed.body.accessToken), { u: user.id, a: [3], n: ['1'], dt: ['1'], t: 1 })
  const info = await h.request('GET', '/info', { token: refreshed.body.accessToken })
  t.equal(info.status, 200, 'the refreshed access token authenticates')
})
