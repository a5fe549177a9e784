import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import type { Store } from '../../../lib/core/ports.js'
import { createTestApp } from '../../fixtures/app.js'
import { registry } from '../../fixtures/registry.js'
import { connect } from '../../fixtures/websocket.js'
import { openTestStore } from '../../fixtures/store.js'

const SECRET_FIELDS = /passwordHash|password|loginAttempts|scrypt\$/

t.test('create, read, list and count users with exact views', async (t) => {
  const h = await createTestApp(t)
  const created = await h.request('POST', '/user', { body: { login: '  alice  ', password: 'secret-1', role: 1, data: { b: 1, a: 2 }, id: 50, lastLogin: 'x', networks: [1], oldPassword: 'y' } })
  t.same([created.status, created.body], [201, { id: 2, lastLogin: null, data: { b: 1, a: 2 }, introReviewed: false, allDeviceTypesAvailable: true }])
  t.same(Object.keys(created.body), ['id', 'lastLogin', 'data', 'introReviewed', 'allDeviceTypesAvailable'])
  const alice = { id: 2, login: 'alice', role: 1, status: 0, lastLogin: null, data: { b: 1, a: 2 }, introReviewed: false, allDeviceTypesAvailable: true }
  const got = await h.request('GET', '/user/2')
  t.same([got.status, got.body], [200, { ...alice, networks: [] }])
  t.same(Object.keys(got.body), ['id', 'login', 'role', 'status', 'lastLogin', 'data', 'introReviewed', 'allDeviceTypesAvailable', 'networks'])
  t.match(got.text, /"data":\{"b":1,"a":2\}/)

  await h.request('PUT', '/user/2/network/1')
  t.same((await h.request('GET', '/user/2')).body.networks, [{ id: 1, name: 'Sample Network', description: 'A DeviceHive Sample Network' }])

  const bob = await h.request('POST', '/user', { body: { login: 'bob', password: 'secret-2', role: 0, status: 2, introReviewed: true, allDeviceTypesAvailable: false, data: null } })
  t.same(bob.body, { id: 3, lastLogin: null, data: null, introReviewed: true, allDeviceTypesAvailable: false })

  const list = await h.request('GET', '/user')
  t.equal(list.status, 200)
  t.same(list.body.map((u: { login: string }) => u.login), ['dhadmin', 'alice', 'bob'])
  t.same(list.body[1], alice)
  t.same(Object.keys(list.body[0]), ['id', 'login', 'role', 'status', 'lastLogin', 'data', 'introReviewed', 'allDeviceTypesAvailable'])
  for (const res of [created, got, list, bob]) t.notMatch(res.text, SECRET_FIELDS, 'no secrets in any view')

  await h.hub.tokens.login('alice', 'secret-1')
  t.match((await h.request('GET', '/user/2')).body.lastLogin, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/)

  const logins = async (query: string): Promise<string[]> => (await h.request('GET', `/user${query}`)).body.map((u: { login: string }) => u.login)
  const count = async (query: string): Promise<number> => (await h.request('GET', `/user/count${query}`)).body.count
  const cases: Array<[string, string[]]> = [
    ['?login=alice', ['alice']],
    ['?login=nobody', []],
    ['?loginPattern=%25b%25', ['bob']],
    ['?login=alice&loginPattern=b%25', ['bob']],
    ['?role=0', ['dhadmin', 'bob']],
    ['?status=2', ['bob']],
    ['?role=1&status=0', ['alice']]
  ]
  for (const [query, expected] of cases) {
    t.same(await logins(query), expected, query)
    t.equal(await count(query), expected.length, `count ${query}`)
  }
  t.equal(await count(''), 3)
  t.same(await logins('?sortField=login&sortOrder=DESC'), ['dhadmin', 'bob', 'alice'])
  t.same(await logins('?sortField=ID&sortOrder=desc&take=2'), ['bob', 'alice'])
  t.same(await logins('?skip=1&take=1'), ['alice'])
  for (const bad of ['?sortField=role', '?take=-1', '?skip=-1', '?role=x']) {
    t.same((await h.request('GET', `/user${bad}`)).body, { error: 400, message: 'Invalid request parameters' }, bad)
  }
})

t.test('user create and update errors', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  await h.request('POST', '/user', { body: { login: 'taken', password: 'secret-1', role: 1 } })
  const login = 'Field cannot be empty. The length of login should be from 3 to 128 symbols.'
  const cases: Array<[string, string, unknown, number, string]> = [
    ['POST', '/user', { login: 'a', password: 'secret-1', role: 1 }, 400, login],
    ['POST', '/user', { login: '  ab  ', password: 'secret-1', role: 1 }, 400, login],
    ['POST', '/user', { login: 'x'.repeat(129), password: 'secret-1', role: 1 }, 400, login],
    ['POST', '/user', { invalidProp: 1 }, 400, `Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property login (value: null): ${login} ; `],
    ['POST', '/user', undefined, 400, 'Error! Validation failed: Object is null'],
    ['POST', '/user', { login: 'newbie', password: 'secret-1' }, 400, 'User role is invalid or empty'],
    ['POST', '/user', { login: 'newbie', password: 'secret-1', role: 7 }, 400, 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property role (value: 7): User role is invalid or empty ; '],
    ['POST', '/user', { login: 'newbie', password: 'secret-1', role: 1, status: 3 }, 400, 'Invalid user status'],
    ['POST', '/user', { login: 'taken', password: 'secret-1', role: 1 }, 403, 'User with such login already exists. Please, select another one'],
    ['POST', '/user', { login: 'newbie', password: '12345', role: 1 }, 400, 'Password can contain only from 6 to 128 symbols!'],
    ['POST', '/user', { login: 'newbie', role: 1 }, 400, 'Password can contain only from 6 to 128 symbols!'],
    ['POST', '/user', { login: 'newbie', password: 'p'.repeat(129), role: 1 }, 400, 'Password can contain only from 6 to 128 symbols!'],
    ['POST', '/user', { login: 'newbie', password: 'secret-1', role: 1, data: [1] }, 400, "'parameters' must be JSON Object!"],
    ['POST', '/user', { login: 'newbie', password: 'secret-1', role: 1, data: 'str' }, 400, "'parameters' must be JSON Object!"],
    ['POST', '/user', { login: 'newbie', password: 'secret-1', role: 'admin' }, 400, 'Invalid request parameters'],
    ['POST', '/user', { login: 'newbie', password: 'secret-1', role: 1, introReviewed: 'sure' }, 400, 'Invalid request parameters'],
    ['PUT', '/user/2', { login: 'dhadmin' }, 403, 'User with such login already exists. Please, select another one'],
    ['PUT', '/user/2', { login: 'a' }, 400, login],
    ['PUT', '/user/2', { password: 'short' }, 400, 'Password can contain only from 6 to 128 symbols!'],
    ['PUT', '/user/2', { status: 3 }, 400, 'Invalid user status'],
    ['PUT', '/user/2', { role: 2 }, 400, 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property role (value: 2): User role is invalid or empty ; '],
    ['PUT', '/user/2', { data: 12 }, 400, "'parameters' must be JSON Object!"],
    ['PUT', '/user/999999', { data: null }, 404, 'User with id = 999999 not found'],
    ['PUT', '/user/0', undefined, 404, 'User with id = 0 not found'],
    ['GET', '/user/999999', undefined, 404, 'User with id = 999999 not found'],
    ['GET', '/user/0', undefined, 404, 'User with id = 0 not found'],
    ['GET', '/user/abc', undefined, 404, 'HTTP 404 Not Found'],
    ['GET', '/user/-5', undefined, 404, 'User with id = -5 not found'],
    ['PUT', '/user/2/network/x', undefined, 404, 'HTTP 404 Not Found'],
    ['DELETE', '/user/999999', undefined, 404, 'User with id = 999999 not found'],
    ['DELETE', '/user/1', undefined, 403, 'You can not delete a user or access key that you use to authenticate this request'],
    ['PUT', '/user/current', { data: [] }, 400, "'parameters' must be JSON Object!"]
  ]
  const before = await r.snapshot()
  for (const [method, path, body, status, message] of cases) {
    const res = await h.request(method, path, { body })
    t.same([res.status, res.body], [status, { error: status, message }], `${method} ${path} ${JSON.stringify(body)?.slice(0, 50)}`)
  }
  t.same(await r.snapshot(), before, 'nothing changed')
})

t.test('update rules: data always replaced, password, role, status', async (t) => {
  const h = await createTestApp(t)
  const created = await h.request('POST', '/user', { body: { login: 'carol', password: 'secret-1', role: 1, data: { x: 1 }, introReviewed: true } })
  const id = created.body.id as number
  t.equal((await h.request('PUT', `/user/${id}`)).status, 204, 'no body: unchanged')
  t.same((await h.request('GET', `/user/${id}`)).body.data, { x: 1 })
  t.equal((await h.request('PUT', `/user/${id}`, { body: { introReviewed: false, allDeviceTypesAvailable: false } })).status, 204)
  const after = (await h.request('GET', `/user/${id}`)).body
  t.same([after.data, after.introReviewed, after.allDeviceTypesAvailable], [null, false, true], 'absent data clears it; allDeviceTypesAvailable ignored')
  t.equal((await h.request('PUT', `/user/${id}`, { body: { login: ' carol2 ', password: 'new-secret', role: 0, status: 2, data: { y: 2 } } })).status, 204)
  t.same((await h.request('GET', `/user/${id}`)).body, { id, login: 'carol2', role: 0, status: 2, lastLogin: null, data: { y: 2 }, introReviewed: false, allDeviceTypesAvailable: true, networks: [] })
  await h.request('PUT', `/user/${id}`, { body: { status: 0 } })
  await t.resolves(h.hub.tokens.login('carol2', 'new-secret'), 'new password works')
  await t.rejects(h.hub.tokens.login('carol2', 'secret-1'), 'old password refused')
  t.equal((await h.request('PUT', `/user/${id}`, { body: { password: '' } })).status, 204, 'empty password = unchanged')
  await t.resolves(h.hub.tokens.login('carol2', 'new-secret'))
  const stored = await h.store.users.findById(id)
  t.match(stored?.passwordHash, /^scrypt\$/, 'stored hashed')
})

t.test('current user: read and update, client restrictions', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({ login: 'dave', networkIds: [1], data: { a: 1 } })
  const token = client.accessToken
  const current = await h.request('GET', '/user/current', { token })
  t.same([current.status, current.body], [200, {
    id: client.user.id, login: 'dave', role: 1, status: 0, lastLogin: null, data: { a: 1 }, introReviewed: false, allDeviceTypesAvailable: true,
    networks: [{ id: 1, name: 'Sample Network', description: 'A DeviceHive Sample Network' }]
  }])
  t.notMatch(current.text, SECRET_FIELDS)
  for (const body of [{ login: 'dave' }, { status: 0 }, { role: 1 }]) {
    const res = await h.request('PUT', '/user/current', { token, body })
    t.same([res.status, res.body], [403, { error: 403, message: 'Admin permissions required for this action' }], JSON.stringify(body))
  }
  const promote = await h.request('PUT', '/user/current', { token, body: { role: 0 } })
  t.same([promote.status, promote.body], [403, { error: 403, message: 'Access is denied' }], 'D1: no self-promotion')
  // Tokens issued in the same millisecond are the same token: take one that differs.
  let earlier = await h.hub.tokens.issueForUser(client.user.id)
  while (earlier.accessToken === token) earlier = await h.hub.tokens.issueForUser(client.user.id)
  t.equal((await h.request('PUT', '/user/current', { token, body: { password: 'dave-new-pass', data: { b: 2 }, introReviewed: true } })).status, 204)
  // D11: a password change revokes every other token, not the one that made it (DeviceHive goes on with it).
  t.equal((await h.request('GET', '/user/current', { token })).status, 200, 'the token that changed the password goes on')
  t.equal((await h.request('GET', '/user/current', { token: earlier.accessToken })).status, 401, 'another token issued before it is revoked')
  const after = (await h.request('GET', '/user/current', { token: (await h.hub.tokens.login('dave', 'dave-new-pass')).accessToken })).body
  t.same([after.role, after.data, after.introReviewed], [1, { b: 2 }, true])
  await t.resolves(h.hub.tokens.login('dave', 'dave-new-pass'))
  t.equal((await h.request('PUT', '/user/current', { body: { login: 'root-admin', status: 0 } })).status, 204, 'an admin may change its own login')
  t.equal((await h.request('GET', '/user/current')).body.login, 'root-admin')

  const deleted = await h.createUser({})
  await h.store.users.delete(deleted.user.id)
  const gone = await h.request('GET', '/user/current', { token: deleted.accessToken })
  t.equal(gone.status, 401, 'a deleted user\'s token no longer authenticates')
})

t.test('a locked or disabled user\'s tokens stop working', async (t) => {
  const h = await createTestApp(t)
  for (const status of [1, 2]) {
    const client = await h.createUser({ networkIds: [1] })
    t.equal((await h.request('GET', '/user/current', { token: client.accessToken })).status, 200)
    t.equal((await h.request('PUT', `/user/${client.user.id}`, { body: { status } })).status, 204)
    for (const path of ['/user/current', '/network', '/device']) {
      const res = await h.request('GET', path, { token: client.accessToken })
      t.same([res.status, res.body], [401, { error: 401, message: 'Unauthorized' }], `status ${status}: ${path}`)
    }
    t.equal((await h.request('PUT', `/user/${client.user.id}`, { body: { status: 0 } })).status, 204)
    // #16: a status change revokes the tokens issued before it, even when the account comes back.
    t.equal((await h.request('GET', '/user/current', { token: client.accessToken })).status, 401, 'old tokens stay revoked')
    const fresh = await h.hub.tokens.login(client.user.login, client.password)
    t.equal((await h.request('GET', '/user/current', { token: fresh.accessToken })).status, 200, 'reactivated: a new login works')
  }
})

t.test('clients holding ManageUser (D1, D7)', async (t) => {
  const h = await createTestApp(t)
  const manager = await h.createUser({ login: 'manager' })
  const other = await h.createUser({ login: 'other', data: { k: 1 } })
  const token = registry(h).token(manager.user.id, [Action.ManageUser, Action.GetCurrentUser, Action.UpdateCurrentUser], ['*'], ['*'])
  const denied = { error: 403, message: 'Access is denied' }

  const own = await h.request('GET', `/user/${manager.user.id}`, { token })
  t.equal(own.status, 200, 'own record')
  const foreign = await h.request('GET', `/user/${other.user.id}`, { token })
  t.same([foreign.status, foreign.body], [403, { error: 403, message: `User with id = ${other.user.id} not found` }])
  const missing = await h.request('GET', '/user/999999', { token })
  t.same([missing.status, missing.body], [403, { error: 403, message: 'User with id = 999999 not found' }], 'missing and foreign look alike')

  const admin = await h.request('POST', '/user', { token, body: { login: 'sneaky', password: 'secret-1', role: 0 } })
  t.same([admin.status, admin.body], [403, denied], 'cannot create admins')
  t.equal((await h.request('GET', '/user/count?login=sneaky')).body.count, 0)
  const plain = await h.request('POST', '/user', { token, body: { login: 'plain', password: 'secret-1', role: 1 } })
  t.equal(plain.status, 201, 'may create clients')

  // #16: one rule for /user/{id} whatever the verb: only an admin acts on another user.
  const foreignUser = { error: 403, message: `User with id = ${other.user.id} not found` }
  const promote = await h.request('PUT', `/user/${other.user.id}`, { token, body: { role: 0 } })
  t.same([promote.status, promote.body], [403, foreignUser], 'cannot promote')
  const password = await h.request('PUT', `/user/${other.user.id}`, { token, body: { password: 'hijacked-1' } })
  t.same([password.status, password.body], [403, foreignUser], 'cannot change another user\'s password')
  await t.resolves(h.hub.tokens.login('other', other.password), 'password unchanged')
  for (const body of [{ login: 'renamed' }, { status: 1 }, { role: 1 }, { data: { k: 2 } }]) {
    const res = await h.request('PUT', `/user/${other.user.id}`, { token, body })
    t.same([res.status, res.body], [403, foreignUser], JSON.stringify(body))
  }
  const remove = await h.request('DELETE', `/user/${other.user.id}`, { token })
  t.same([remove.status, remove.body], [403, foreignUser], 'cannot delete another user')
  t.same((await h.request('GET', `/user/${other.user.id}`)).body.data, { k: 1 }, 'nothing changed')
  t.equal((await h.request('PUT', `/user/${manager.user.id}`, { token, body: { password: 'manager-new' } })).status, 204, 'own password')
  await t.resolves(h.hub.tokens.login('manager', 'manager-new'))

  t.equal((await h.request('GET', `/user/${manager.user.id}`, { token })).status, 200, 'D11: the token that changed its own password goes on')
  const version = (await h.store.users.findById(manager.user.id))!.tokenVersion
  const older = h.sign({ u: manager.user.id, a: [Action.ManageUser], n: ['*'], dt: ['*'], e: Date.now() + 60_000, t: 1, v: version - 1 })
  t.equal((await h.request('GET', `/user/${manager.user.id}`, { token: older })).status, 401, 'any other token of the old version is revoked')
  const self = await h.request('DELETE', `/user/${manager.user.id}`, { token })
  t.same([self.status, self.body], [403, { error: 403, message: 'You can not delete a user or access key that you use to authenticate this request' }])
})

t.test('a client holding ManageUser lists and counts only its own account, over REST and WebSocket (#22)', async (t) => {
  const h = await createTestApp(t)
  const manager = await h.createUser({ login: 'manager' })
  await h.createUser({ login: 'other', data: { secret: 1 } })
  const token = registry(h).token(manager.user.id, [Action.ManageUser], ['*'], ['*'])
  const ids = (users: Array<{ id: number }>): number[] => users.map((u) => u.id)

  t.ok((await h.request('GET', '/user')).body.length >= 3, 'an administrator lists everyone')
  t.ok((await h.request('GET', '/user/count')).body.count >= 3, 'and counts everyone')
  const list = await h.request('GET', '/user', { token })
  t.same([list.status, ids(list.body), list.body[0]?.login], [200, [manager.user.id], 'manager'], 'REST list: itself only')
  t.same((await h.request('GET', '/user/count', { token })).body, { count: 1 }, 'REST count: 1')
  // The filters still apply, to that one row.
  for (const [query, expected] of [['login=manager', 1], ['login=other', 0], ['loginPattern=%25', 1], ['loginPattern=oth%25', 0],
    ['role=1', 1], ['role=0', 0], ['status=0', 1], ['status=2', 0]] as const) {
    t.equal((await h.request('GET', `/user?${query}`, { token })).body.length, expected, `list ${query}`)
    t.same((await h.request('GET', `/user/count?${query}`, { token })).body, { count: expected }, `count ${query}`)
  }
  t.same((await h.request('GET', '/user?skip=1', { token })).body, [], 'paging applies too')

  const ws = await connect(t, h, { token })
  const wsList = await ws.request({ action: 'user/list' })
  t.same([wsList.status, ids(wsList.users)], ['success', [manager.user.id]], 'WebSocket user/list: itself only')
  t.equal((await ws.request({ action: 'user/count' })).count, 1, 'WebSocket user/count: 1')
  t.same(ids((await ws.request({ action: 'user/list', login: 'other' })).users), [], 'WebSocket filter on another login: nothing')
  t.equal((await ws.request({ action: 'user/count', loginPattern: 'oth%' })).count, 0)
  const admin = await connect(t, h, { token: h.adminToken })
  t.ok((await admin.request({ action: 'user/count' })).count >= 3, 'an administrator still counts everyone over WebSocket')
})

t.test('delete a user removes its assignments only (§8)', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net = await r.network('Kept')
  const type = await r.deviceType('Kept type')
  await r.device('kept-dev', { networkId: net, deviceTypeId: type })
  const client = await h.createUser({ networkIds: [net], allDeviceTypesAvailable: false, deviceTypeIds: [type] })
  const del = await h.request('DELETE', `/user/${client.user.id}`)
  t.same([del.status, del.text], [204, ''])
  t.equal((await h.request('GET', `/user/${client.user.id}`)).status, 404)
  t.same(await h.store.users.networkIds(client.user.id), [])
  t.same(await h.store.users.deviceTypeIds(client.user.id), [])
  t.equal((await h.request('GET', `/network/${net}`)).status, 200)
  t.equal((await h.request('GET', `/devicetype/${type}`)).status, 200)
  t.equal((await h.request('GET', '/device/kept-dev')).status, 200)
  t.equal((await h.request('GET', '/user/current', { token: client.accessToken })).status, 401)
})

t.test('user endpoints refuse callers without ManageUser', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({ networkIds: [1] })
  const token = client.accessToken
  for (const [method, path] of [['GET', '/user'], ['GET', '/user/count'], ['GET', `/user/${client.user.id}`], ['POST', '/user'], ['PUT', '/user/1'], ['DELETE', '/user/1']] as const) {
    const res = await h.request(method, path, { token, body: method === 'POST' || method === 'PUT' ? { login: 'zzz' } : undefined })
    t.same([res.status, res.body], [403, { error: 403, message: 'Access is denied' }], `${method} ${path}`)
    const anonymous = await h.request(method, path, { token: null })
    t.same([anonymous.status, anonymous.body], [401, { error: 401, message: 'Unauthorized' }], `${method} ${path} anonymous`)
  }
  const none = registry(h).token(client.user.id, [], ['*'], ['*'])
  t.equal((await h.request('GET', '/user/current', { token: none })).status, 200, 'a: [] is the client set, with GetCurrentUser')
  const nothing = h.sign({ u: client.user.id, a: null, n: null, dt: null, e: Date.now() + 60_000, t: 1 })
  t.same((await h.request('GET', '/user/current', { token: nothing })).body, { error: 403, message: 'Access is denied' })
  t.same((await h.request('PUT', '/user/current', { token: nothing, body: {} })).body, { error: 403, message: 'Access is denied' })
})

t.test('a login taken concurrently answers the duplicate message, not 409', async (t) => {
  const real = await openTestStore(t)
  const slowLookup = async (login: string) => {
    const found = await real.users.findByLogin(login)
    await new Promise((resolve) => setTimeout(resolve, 20))
    return found
  }
  // A property of its own: the store's repositories are getters (built on first use).
  const store = Object.create(real, { users: { value: { ...real.users, findByLogin: slowLookup } } }) as Store
  const h = await createTestApp(t, { store })
  const body = { login: 'twin', password: 'secret-1', role: 1 }
  const both = await Promise.all([h.request('POST', '/user', { body }), h.request('POST', '/user', { body })])
  t.same(both.map((r) => r.status).sort(), [201, 403])
  t.same(both.find((r) => r.status === 403)?.body, { error: 403, message: 'User with such login already exists. Please, select another one' })
  t.same((await h.request('GET', '/user/count?login=twin')).body, { count: 1 })
})
