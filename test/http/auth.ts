import t from 'tap'
import { createHmac } from 'node:crypto'
import { createTestApp, JWT_SECRET } from '../fixtures/app.js'
import { deriveJwtKey } from '../../lib/core/auth/jwt-key.js'

// Bearer handling and the validation order of auth spec §1.5 and §1.7, on a protected route
// (configuration) and a public one (info).
t.test('REST token failures answer 401 with the contract messages', async (t) => {
  const h = await createTestApp(t)
  const e = Date.now() + 60_000
  const { refreshToken } = await h.hub.tokens.issueForUser(1)
  const locked = await h.createUser({ role: 0 })
  const lockedToken = locked.accessToken
  await h.store.users.update(locked.user.id, { status: 1 })
  const disabled = await h.createUser({ role: 0 })
  await h.store.users.update(disabled.user.id, { status: 2 })
  const key = deriveJwtKey(JWT_SECRET)
  const b64 = (v: object): string => Buffer.from(JSON.stringify(v)).toString('base64url')
  const hs512 = (() => {
    const input = `${b64({ alg: 'HS512' })}.${b64({ payload: { u: 1, a: [0], n: ['*'], dt: ['*'], e, t: 1 } })}`
    return `${input}.${createHmac('sha512', key).update(input).digest('base64url')}`
  })()

  const cases: Array<[string, Record<string, string>, string]> = [
    ['no token', {}, 'Unauthorized'],
    ['Basic scheme', { authorization: 'Basic ZGhhZG1pbjpkaGFkbWlu' }, 'Unauthorized'],
    ['bare Bearer', { authorization: 'Bearer' }, 'Unauthorized'],
    ['Bearer and spaces', { authorization: 'Bearer    ' }, 'Unauthorized'],
    ['lower-case scheme', { authorization: `bearer ${h.adminToken}` }, 'Unauthorized'],
    ['not a JWT', { authorization: 'Bearer abc.def' }, 'Unauthorized'],
    ['bad signature', { authorization: `Bearer ${h.adminToken.slice(0, -4)}AAAA` }, 'Unauthorized'],
    ['expired', { authorization: `Bearer ${h.sign({ u: 1, a: [0], n: ['*'], dt: ['*'], e: Date.now() - 1000, t: 1 })}` }, 'Token expired'],
    ['refresh token as access', { authorization: `Bearer ${refreshToken}` }, 'Unauthorized'],
    ['unknown user', { authorization: `Bearer ${h.sign({ u: 999999, a: [0], n: ['*'], dt: ['*'], e, t: 1 })}` }, 'Unauthorized'],
    ['locked user', { authorization: `Bearer ${lockedToken}` }, 'Unauthorized'],
    ['disabled user', { authorization: `Bearer ${h.sign({ u: disabled.user.id, a: [0], n: ['*'], dt: ['*'], e, t: 1 })}` }, 'Unauthorized'],
    ['unknown action id', { authorization: `Bearer ${h.sign({ u: 1, a: [0, 77], n: ['*'], dt: ['*'], e, t: 1 } as never)}` }, 'Unauthorized'],
    ['plugin token of no plugin', { authorization: `Bearer ${h.sign({ tpc: 'plugin_topic_nope', a: [16], e, t: 1 })}` }, 'Unauthorized'],
    ['HS512 (D6)', { authorization: `Bearer ${hs512}` }, 'Unauthorized'],
    ['alg none (D6)', { authorization: `Bearer ${b64({ alg: 'none' })}.${b64({ payload: { u: 1, a: [0], n: ['*'], dt: ['*'], e, t: 1 } })}.` }, 'Unauthorized']
  ]
  for (const [name, headers, message] of cases) {
    const res = await h.request('GET', '/configuration/user.login.lastTimeout', { token: null, headers })
    t.same({ status: res.status, body: res.body }, { status: 401, body: { error: 401, message } }, name)
  }
  // Public endpoints work anonymously but still refuse a bad header (§1.5).
  t.equal((await h.request('GET', '/info', { token: null })).status, 200)
  t.same((await h.request('GET', '/info', { token: null, headers: { authorization: 'Basic abc' } })).body, { error: 401, message: 'Unauthorized' })
  t.same((await h.request('POST', '/token', { token: null, headers: { authorization: 'Bearer x.y.z' }, body: { login: 'a', password: 'b' } })).body, { error: 401, message: 'Unauthorized' })
})

t.test('actions: `a` rules of §4.1 decide 403 vs success', async (t) => {
  const h = await createTestApp(t)
  const e = Date.now() + 60_000
  const cases: Array<[string, number[] | null, number]> = [
    ['all actions', [0], 404],
    ['exactly ManageConfiguration', [13], 404],
    ['the default client set', [], 403],
    ['NONE', [1], 403],
    ['null', null, 403],
    ['other actions', [2, 3, 4], 403]
  ]
  for (const [name, a, status] of cases) {
    const token = h.sign({ u: 1, a, n: ['*'], dt: ['*'], e, t: 1 })
    const res = await h.request('GET', '/configuration/missing-name', { token })
    t.equal(res.status, status, name)
    if (status === 403) t.same(res.body, { error: 403, message: 'Access is denied' })
  }
  // 403 wins over 400: a caller without the action never learns about its bad input.
  const client = await h.createUser()
  const res = await h.request('PUT', '/configuration/x', { token: client.accessToken, body: { value: [1, 2] } })
  t.same(res.body, { error: 403, message: 'Access is denied' })
  const anonymous = await h.request('PUT', '/configuration/x', { token: null, payload: '{broken' })
  t.equal(anonymous.status, 400, 'an unparseable body is refused before authorization (§5.2 allows either)')
})
