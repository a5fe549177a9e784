/**
 * Regression tests of issue #16 (security and data integrity), one per observation, written
 * from what the adversarial review did. Runs on SQLite, and on PostgreSQL with
 * DEVICEHUB_TEST_PG_URL set.
 */
import t from 'tap'
import { EVERY_USER, revokes } from '../../lib/core/auth/revocations.js'
import { decodeDoorbellEvent, encodeDoorbellEvent } from '../../lib/doorbells/postgres-doorbell.js'
import type { KyselyStore } from '../../lib/store/kysely-store.js'
import { ADMIN_PASSWORD, createTestApp } from '../fixtures/app.js'
import type { TestApp } from '../fixtures/app.js'
import { addDevice, eventually, listen, sleep } from '../fixtures/messaging.js'
import { connectAs } from '../fixtures/websocket.js'

async function network (h: TestApp, name: string): Promise<number> {
  const res = await h.request('POST', '/network', { body: { name, description: null } })
  return res.body.id as number
}

t.test('1. a reused device id shows nothing of the deleted device (commands, notifications, polls, updates)', async (t) => {
  const h = await createTestApp(t)
  const aliceNet = await network(h, 'alice-net')
  const bobNet = await network(h, 'bob-net')
  const alice = await h.createUser({ networkIds: [aliceNet] })
  const bob = await h.createUser({ networkIds: [bobNet] })
  const as = (token: string) => ({ token })

  t.equal((await h.request('PUT', '/device/reuse-1', { ...as(alice.accessToken), body: { name: 'alice', networkId: aliceNet } })).status, 204)
  const command = (await h.request('POST', '/device/reuse-1/command', { ...as(alice.accessToken), body: { command: 'c', parameters: { pin: '1234-ALICE' } } })).body
  const notification = (await h.request('POST', '/device/reuse-1/notification', { ...as(alice.accessToken), body: { notification: 'n', parameters: { secret: 'alice' } } })).body
  t.equal((await h.request('DELETE', '/device/reuse-1', as(alice.accessToken))).status, 204)

  t.equal((await h.request('PUT', '/device/reuse-1', { ...as(bob.accessToken), body: { name: 'bob', networkId: bobNet } })).status, 204)
  const bobs = (path: string, options: object = {}) => h.request('GET', path, { ...as(bob.accessToken), ...options })
  t.same((await bobs(`/device/reuse-1/command/${command.id}`)).status, 404, 'GET command: Alice\'s pin stays hidden')
  t.same((await bobs(`/device/reuse-1/notification/${notification.id}`)).status, 404, 'GET notification')
  t.same((await bobs('/device/reuse-1/command')).body, [], 'command list')
  const listed = (await bobs('/device/reuse-1/notification')).body as Array<{ id: number }>
  t.notOk(listed.some((n) => n.id === notification.id), 'notification list')
  t.same((await bobs('/device/reuse-1/command/poll', { query: { timestamp: '2000-01-01', waitTimeout: 0 } })).body, [], 'command poll from the past')
  t.same((await bobs('/device/reuse-1/notification/poll', { query: { timestamp: '2000-01-01', waitTimeout: 0, names: 'n' } })).body, [], 'notification poll')
  t.same((await bobs(`/device/reuse-1/command/${command.id}/poll`, { query: { waitTimeout: 0 } })).status, 204, 'command wait')
  const put = await h.request('PUT', `/device/reuse-1/command/${command.id}`, { ...as(bob.accessToken), body: { status: 'rewritten' } })
  t.equal(put.status, 404, 'PUT cannot rewrite Alice\'s command')
  // The admin sees the same: the id is a new device.
  t.equal((await h.request('GET', `/device/reuse-1/command/${command.id}`)).status, 404)

  // The history is removed in the background; Bob's own rows stay.
  const own = (await h.request('POST', '/device/reuse-1/command', { ...as(bob.accessToken), body: { command: 'mine' } })).body
  t.ok(await h.hub.purger.runOnce() >= 0)
  await h.hub.purger.runOnce()
  t.equal(await h.store.commands.findById(command.id), undefined, 'Alice\'s command is deleted')
  t.equal(await h.store.notifications.findById(notification.id), undefined, 'Alice\'s notification is deleted')
  t.match(await h.store.commands.findById(own.id), { command: 'mine' }, 'Bob\'s command stays')
  t.same((await h.store.purges.pending(10)), [], 'nothing left queued')
})

t.test('1b. a device deleted with its network (cascade) leaves nothing to a namesake; large histories go in batches', async (t) => {
  const h = await createTestApp(t)
  const doomed = await network(h, 'doomed')
  await addDevice(h, 'cascade-1', { networkId: doomed })
  const rows = Array.from({ length: 1200 }, (_, i) => ({ notification: `n${i}`, deviceId: 'cascade-1', networkId: doomed, deviceTypeId: 1, parameters: null }))
  await h.store.notifications.insertMany(rows, Date.now())
  t.equal((await h.request('DELETE', `/network/${doomed}`, { query: { force: true } })).status, 204)
  await addDevice(h, 'cascade-1')
  t.same((await h.request('GET', '/device/cascade-1/notification', { query: { take: 5000 } })).body, [], 'nothing of the old device')
  // The delete already kicked the background purge, which may have finished before this point:
  // runOnce() joins a run in flight, so after two calls the queue must be empty either way.
  await h.hub.purger.runOnce()
  await h.hub.purger.runOnce()
  t.same(await h.store.purges.pending(20), [], 'every batch of the history was purged')
  t.same(await h.store.notifications.query({ scope: { networkIds: 'all', deviceTypeIds: 'all' }, deviceIds: ['cascade-1'], sortField: 'timestamp', take: 10 }), [])
})

t.test('2. a demoted admin loses admin powers at once, refresh included; so do password and status changes', async (t) => {
  const h = await createTestApp(t)
  const admin2 = await h.createUser({ role: 0 })
  t.equal((await h.request('GET', '/user', { token: admin2.accessToken })).status, 200, 'admin before')
  t.equal((await h.request('PUT', `/user/${admin2.user.id}`, { body: { role: 1 } })).status, 204)
  t.equal((await h.request('GET', '/user', { token: admin2.accessToken })).status, 401, 'the old access token is revoked')
  const refreshed = await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: admin2.refreshToken } })
  t.equal(refreshed.status, 401, 'the old refresh token mints nothing')
  t.equal((await h.request('DELETE', '/user/1', { token: admin2.accessToken })).status, 401, 'cannot delete the only other admin')
  t.equal((await h.request('PUT', '/configuration/x', { token: admin2.accessToken, body: { value: 'y' } })).status, 401)

  // A new login gets client rights only.
  const login = await h.request('POST', '/token', { token: null, body: { login: admin2.user.login, password: admin2.password } })
  t.equal(login.status, 201)
  t.equal((await h.request('GET', '/user', { token: login.body.accessToken })).status, 403, 'client rights now')

  // Password change: every earlier token goes but the one that made it (D11).
  const client = await h.createUser()
  // Tokens issued in the same millisecond are the same token: take one that differs.
  let earlier = await h.hub.tokens.issueForUser(client.user.id)
  while (earlier.accessToken === client.accessToken) earlier = await h.hub.tokens.issueForUser(client.user.id)
  t.equal((await h.request('PUT', '/user/current', { token: client.accessToken, body: { password: 'new-password-1' } })).status, 204)
  t.equal((await h.request('GET', '/user/current', { token: earlier.accessToken })).status, 401, 'password change revokes the other tokens')
  t.equal((await h.request('GET', '/user/current', { token: client.accessToken })).status, 200, 'not the one that made it')
  t.equal((await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: client.refreshToken } })).status, 401)

  // Disable then enable: the tokens from before stay revoked.
  const other = await h.createUser()
  await h.request('PUT', `/user/${other.user.id}`, { body: { status: 2 } })
  await h.request('PUT', `/user/${other.user.id}`, { body: { status: 0 } })
  t.equal((await h.request('GET', '/user/current', { token: other.accessToken })).status, 401, 're-enabled, old token still revoked')
  // Unchanged role, status and password keep tokens valid.
  await h.request('PUT', `/user/${other.user.id}`, { body: { role: 1, status: 0, data: { a: 1 } } })
  const fresh = await h.request('POST', '/token', { token: null, body: { login: other.user.login, password: other.password } })
  await h.request('PUT', `/user/${other.user.id}`, { body: { role: 1, data: { a: 2 } } })
  t.equal((await h.request('GET', '/user/current', { token: fresh.body.accessToken })).status, 200, 'a no-op role keeps tokens')
})

t.test('2b. the last active admin cannot be deleted, demoted or disabled', async (t) => {
  const h = await createTestApp(t)
  const message = 'The last active administrator cannot be deleted, demoted or disabled'
  for (const body of [{ role: 1 }, { status: 2 }, { status: 1 }]) {
    const res = await h.request('PUT', '/user/1', { body })
    t.same([res.status, res.body], [403, { error: 403, message }], JSON.stringify(body))
  }
  t.same((await h.request('PUT', '/user/current', { body: { status: 2 } })).status, 403, 'through /user/current too')
  const admin2 = await h.createUser({ role: 0 })
  t.equal((await h.request('PUT', '/user/1', { token: admin2.accessToken, body: { role: 1 } })).status, 204, 'another admin remains: allowed')
  t.equal((await h.request('GET', '/user')).status, 401, 'user 1 is a client now; its admin token is revoked')
  const res = await h.request('DELETE', `/user/${admin2.user.id}`, { token: (await h.hub.tokens.issueForUser(1)).accessToken })
  t.equal(res.status, 403, 'and a new token of user 1 has client rights')
  const self = await h.request('PUT', `/user/${admin2.user.id}`, { token: admin2.accessToken, body: { role: 1 } })
  t.same([self.status, self.body.message], [403, message], 'the last admin cannot demote itself')
  t.equal((await h.hub.store.users.findById(admin2.user.id))!.role, 0)
})

t.test('3. failed logins are throttled, never a permanent lock; the admin keeps working', async (t) => {
  let now = Date.now()
  const h = await createTestApp(t, { clock: { now: () => now } })
  const statuses: number[] = []
  for (let i = 0; i < 12; i++) {
    statuses.push((await h.request('POST', '/token', { token: null, body: { login: 'dhadmin', password: `wrong-${i}` } })).status)
  }
  t.same(statuses.slice(0, 5), [401, 401, 401, 401, 401], 'five free attempts')
  t.ok(statuses.slice(5).every((s) => s === 429), 'then held back')
  const held = await h.request('POST', '/token', { token: null, body: { login: 'dhadmin', password: ADMIN_PASSWORD } })
  t.equal(held.status, 429, 'the right password waits too (no guessing while held)')
  t.match(held.body.message, /^Too many failed login attempts\. Retry in \d+ s$/)
  t.ok(Number(held.headers['retry-after']) > 0, 'Retry-After')
  t.equal((await h.store.users.findById(1))!.status, 0, 'never LOCKED')
  t.equal((await h.request('GET', '/user/current')).status, 200, 'existing tokens keep working')
  now += 60_000
  const later = await h.request('POST', '/token', { token: null, body: { login: 'dhadmin', password: ADMIN_PASSWORD } })
  t.equal(later.status, 201, 'the hold ends by itself')
  // Another login from another address is not held by dhadmin's failures.
  const other = await h.createUser({ password: 'other-password' })
  t.equal((await h.request('POST', '/token', { token: null, body: { login: other.user.login, password: 'other-password' } })).status, 201)
})

t.test('4. lifetime Infinity, -Infinity, 1e400 are refused; a stored one does not break reads', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  for (const payload of ['{"command":"c","lifetime":"Infinity"}', '{"command":"c","lifetime":"-Infinity"}', '{"command":"c","lifetime":1e400}',
    '{"command":"c","lifetime":"1e400"}', '{"command":"c","lifetime":[1]}', '{"command":"c","status":["a"]}', '{"command":"c","parameters":{"x":1e400}}']) {
    const res = await h.request('POST', `/device/${device}/command`, { payload })
    t.equal(res.status, 400, payload)
  }
  t.same((await h.request('GET', `/device/${device}/command`)).body, [], 'nothing stored')
  const ok = await h.request('POST', `/device/${device}/command`, { body: { command: 'c', lifetime: 60 } })
  t.equal(ok.status, 201)
  if (h.store.dialect === 'sqlite') {
    // A value written by an older version: every read path still answers.
    const { db } = h.store as KyselyStore
    await db.updateTable('commands').set({ lifetime: Infinity, parameters: '{not json' }).where('id', '=', ok.body.id).execute()
    const list = await h.request('GET', `/device/${device}/command`)
    t.equal(list.status, 200)
    t.same([list.body[0].lifetime, list.body[0].parameters], [null, null])
    t.equal((await h.request('GET', `/device/${device}/command/${ok.body.id}`)).status, 200)
    const poll = await h.request('GET', `/device/${device}/command/poll`, { query: { timestamp: '2000-01-01', waitTimeout: 0 } })
    t.equal(poll.status, 200)
    // 10,000 levels written before the depth limit existed: read back as null, not a 500.
    await db.updateTable('commands').set({ parameters: `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}` }).where('id', '=', ok.body.id).execute()
    const deep = await h.request('GET', `/device/${device}/command/${ok.body.id}`)
    t.same([deep.status, deep.body.parameters], [200, null])
  } else {
    t.pass('PostgreSQL integer columns cannot hold Infinity')
  }
})

t.test('5. the command poll limit is capped like take', async (t) => {
  const h = await createTestApp(t, { limits: { maxTake: 5 } })
  const device = await addDevice(h)
  for (let i = 0; i < 8; i++) await h.request('POST', `/device/${device}/command`, { body: { command: `c${i}` } })
  for (const limit of ['1000000000', '1e20']) {
    const res = await h.request('GET', `/device/${device}/command/poll`, { query: { timestamp: '2000-01-01', waitTimeout: 0, limit } })
    t.same([res.status, res.body.length], [200, 5], `limit=${limit}`)
  }
  for (const limit of ['Infinity', '-Infinity', '1e400']) {
    t.equal((await h.request('GET', `/device/${device}/command/poll`, { query: { waitTimeout: 0, limit } })).status, 400, `limit=${limit}`)
  }
})

t.test('6. open long polls stop delivering when access is revoked', async (t) => {
  const h = await createTestApp(t)
  const net = await network(h, 'revoke-net')
  const device = await addDevice(h, 'revoke-dev', { networkId: net })
  const client = await h.createUser({ networkIds: [net] })
  const started = Date.now()
  const poll = h.request('GET', `/device/${device}/notification/poll`, { token: client.accessToken, query: { waitTimeout: 30 } })
  const many = h.request('GET', '/device/command/poll', { token: client.accessToken, query: { waitTimeout: 30 } })
  await sleep(200)
  t.equal((await h.request('DELETE', `/user/${client.user.id}/network/${net}`)).status, 204)
  const [a, b] = await Promise.all([poll, many])
  t.same([a.status, a.body, b.status, b.body], [200, [], 200, []], 'both answer [] at once')
  t.ok(Date.now() - started < 10_000, 'long before their wait time')
  // What is written afterwards is not delivered to the client's next poll.
  await h.request('POST', `/device/${device}/notification`, { body: { notification: 'after' } })
  // The token still names the network, the user no longer has it: restricted, so 403 (D7).
  t.equal((await h.request('GET', `/device/${device}/notification/poll`, { token: client.accessToken, query: { waitTimeout: 0 } })).status, 403)

  // Disabling the account ends its waits too.
  const other = await h.createUser({ networkIds: [net] })
  const parked = h.request('GET', `/device/${device}/notification/poll`, { token: other.accessToken, query: { waitTimeout: 30 } })
  await sleep(200)
  await h.request('PUT', `/user/${other.user.id}`, { body: { status: 2 } })
  t.same((await parked).body, [])
  t.equal((await h.request('GET', `/device/${device}/notification/poll`, { token: other.accessToken, query: { waitTimeout: 0 } })).status, 401)

  // An unrelated user's change leaves a poll parked.
  const third = await h.createUser({ networkIds: [net] })
  let settled = false
  const waiting = h.request('GET', `/device/${device}/notification/poll`, { token: third.accessToken, query: { waitTimeout: 1 } }).finally(() => { settled = true })
  await sleep(100)
  await h.request('PUT', `/user/${client.user.id}`, { body: { status: 2 } })
  await sleep(100)
  t.notOk(settled, 'still parked')
  await waiting
})

t.test('6c. WebSocket subscriptions and event streams stop when access is revoked', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const net = await network(h, 'revoke-stream-net')
  const device = await addDevice(h, 'revoke-stream-dev', { networkId: net })
  const client = await h.createUser({ networkIds: [net] })
  const bystander = await h.createUser({ networkIds: [net] })

  const ws = await connectAs(t, h, client.accessToken)
  t.equal((await ws.request({ action: 'notification/subscribe', deviceId: device })).status, 'success')
  const watcher = await connectAs(t, h, bystander.accessToken)
  t.equal((await watcher.request({ action: 'notification/subscribe', deviceId: device })).status, 'success')
  const sse = await fetch(`${base}/device/${device}/notification/stream`, { headers: { authorization: `Bearer ${client.accessToken}` } })
  t.equal(sse.status, 200)
  const sseText = sse.text()
  await h.request('POST', `/device/${device}/notification`, { body: { notification: 'before' } })
  await ws.waitForPushes(1)
  await watcher.waitForPushes(1)

  t.equal((await h.request('DELETE', `/user/${client.user.id}/network/${net}`)).status, 204)
  t.equal(await ws.closed, 1008, 'the socket closes: authenticate and subscribe again under the new rights')
  t.match(await sseText, /"notification":"before"/, 'the event stream ends (the client reconnects and is authorised again)')
  await h.request('POST', `/device/${device}/notification`, { body: { notification: 'after' } })
  await watcher.waitForPushes(2)
  t.same(ws.pushes.map((p) => p.notification.notification), ['before'], 'nothing after the revocation')
  t.same(watcher.pushes.map((p) => p.notification.notification), ['before', 'after'], 'another user\'s subscription goes on')
  const again = await fetch(`${base}/device/${device}/notification/stream`, { headers: { authorization: `Bearer ${client.accessToken}` } })
  t.equal(again.status, 403, 'a reconnect is refused under the new rights')
  await again.body?.cancel()
  // Streams register with the hub's router (what the bus's own listeners are depends on the bus
  // and its ordering); only the bystander's is left.
  await eventually(() => h.hub.router.size === 1)
  t.pass('only the bystander\'s stream is left')
})

t.test('7. hostile inputs that used to answer 500 answer 400', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  let deep = '1'
  for (let i = 0; i < 10_000; i++) deep = `{"a":${deep}}`
  for (const [path, payload] of [[`/device/${device}/notification`, `{"notification":"n","parameters":${deep}}`],
    [`/device/${device}/command`, `{"command":"c","parameters":${deep}}`], [`/device/${device}`, `{"name":"x","data":${deep}}`]] as const) {
    const res = await h.request(path.endsWith(device) ? 'PUT' : 'POST', path, { payload })
    t.same(res.body, { error: 400, message: 'JSON value is nested too deeply: at most 400 levels' }, path)
  }
  let fine = '1'
  // 400 levels: the body object, `parameters`, then 398 arrays.
  for (let i = 0; i < 398; i++) fine = `[${fine}]`
  const ok = await h.request('POST', `/device/${device}/notification`, { payload: `{"notification":"n","parameters":{"a":${fine}}}` })
  t.equal(ok.status, 201, '400 levels are accepted')
  t.equal((await h.request('GET', `/device/${device}/notification/${ok.body.id}`)).status, 200, 'and read back')
  t.equal((await h.request('POST', `/device/${device}/notification`, { payload: `{"notification":"n","parameters":{"a":[${fine}]}}` })).status, 400, '401 are not')
  for (const query of ['take=-Infinity', 'skip=Infinity', 'skip=1e309', 'take=NaN']) {
    for (const path of ['/device', '/network', '/user', `/device/${device}/notification`, `/device/${device}/command`]) {
      t.equal((await h.request('GET', `${path}?${query}`)).status, 400, `${path}?${query}`)
    }
  }
})

t.test('8. one rule for user resources, whatever the verb', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser()
  const target = await h.createUser()
  const token = h.sign({ u: client.user.id, a: [0], n: ['*'], dt: ['*'], e: Date.now() + 60_000, t: 1 })
  const id = target.user.id
  for (const [method, path, body] of [['GET', `/user/${id}`], ['PUT', `/user/${id}`, { data: { x: 1 } }], ['DELETE', `/user/${id}`],
    ['GET', `/user/${id}/network/1`], ['PUT', `/user/${id}/network/1`], ['DELETE', `/user/${id}/network/1`],
    ['GET', `/user/${id}/devicetype`], ['GET', `/user/${id}/devicetype/1`], ['PUT', `/user/${id}/devicetype/all`],
    ['DELETE', `/user/${id}/devicetype/all`], ['PUT', `/user/${id}/devicetype/1`], ['DELETE', `/user/${id}/devicetype/1`]] as const) {
    const res = await h.request(method, path, { token, body })
    t.same([res.status, res.body], [403, { error: 403, message: `User with id = ${id} not found` }], `${method} ${path}`)
  }
  t.ok(await h.store.users.findById(id), 'the target is untouched')
  // Whether a user exists is not told either.
  const missing = await h.request('GET', '/user/999999/network/1', { token })
  t.same([missing.status, missing.body], [403, { error: 403, message: 'User with id = 999999 not found' }])
  t.equal((await h.request('GET', `/user/${client.user.id}`, { token })).status, 200, 'its own record')
})

t.test('9. unknown login and wrong password read the same', async (t) => {
  const h = await createTestApp(t)
  const unknown = await h.request('POST', '/token', { token: null, body: { login: 'nobody-here', password: 'x-password' } })
  const wrong = await h.request('POST', '/token', { token: null, body: { login: 'dhadmin', password: 'x-password' } })
  t.same([unknown.status, unknown.body], [wrong.status, wrong.body])
})

t.test('6b. revoke doorbells cross instances: the PostgreSQL doorbell carries them', async (t) => {
  const event = { kind: 'revoke' as const, userId: 7, what: 'rights' as const }
  t.same(decodeDoorbellEvent(encodeDoorbellEvent(event)), event)
  t.ok(revokes(event, 7))
  t.notOk(revokes(event, 8))
  t.ok(revokes({ ...event, userId: EVERY_USER }, 8), 'EVERY_USER reaches everyone')
  t.notOk(revokes({ ...event, userId: EVERY_USER }, undefined), 'never the system principal')
  t.notOk(revokes({ kind: 'notification', id: 7, deviceId: '', networkId: null, deviceTypeId: null, name: '' }, 7))
})
