/**
 * The revocation rules of D11 (issue 23, point 3) as a table, over real sockets: for each change,
 * which of the target user's open waits end (WebSocket subscriptions close with 1008, parked long
 * polls answer `[]`, event streams end) and which go on (they receive what is written after the
 * change), whether its tokens still work, and that another user's subscription always goes on.
 *
 * The target holds two access tokens: T1 (with its refresh token R1) and T2. A password change
 * made with T1 (REST `PUT /user/current` or WebSocket `user/updateCurrent` on T1's own socket)
 * keeps T1 and everything opened with it, and revokes T2 and R1.
 *
 * Waits are parked before the change (the routing index and the waiter registry count them), and
 * the change's `revoke` doorbell rings before the notification written after it, so "goes on" is
 * seen as a delivery and "ends" as a close or an empty answer: no assertion depends on time.
 */
import type { ClientRequest } from 'node:http'
import { get } from 'node:http'
import t from 'tap'
import type { TestApp } from '../fixtures/app.js'
import { createTestApp } from '../fixtures/app.js'
import { addDevice, eventually, listen } from '../fixtures/messaging.js'
import type { TestSocket } from '../fixtures/websocket.js'
import { connectAs } from '../fixtures/websocket.js'
import type { TestContext } from '../fixtures/store.js'

/** What happens to the target's open waits: all end, none end, or all but those of T1. */
type Ends = 'all' | 'none' | 'others'

interface World {
  h: TestApp
  target: number
  netA: number
  netB: number
  dtA: number
  dtB: number
  /** The target's own socket on T1 (for a change made over WebSocket). */
  ws1: TestSocket
  t1: string
}

interface Row {
  change: string
  /** The target: a client with network A and device type A unless said otherwise. */
  target?: { role?: 0 | 1, allDeviceTypesAvailable?: boolean }
  act: (w: World) => Promise<void>
  ends: Ends
  /** Expected statuses after the change: GET /user/current with T1 and T2, POST /token/refresh with R1. */
  tokens: [number, number, number]
  /** The target's device goes with the change (its network or device type is deleted). */
  deviceGone?: boolean
}

async function ok (p: Promise<{ status: number }>, status = 204): Promise<void> {
  const res = await p
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res)}`)
}

const ROWS: Row[] = [
  { change: 'PUT /user/{id} with data only', act: (w) => ok(w.h.request('PUT', `/user/${w.target}`, { body: { data: { x: 1 } } })), ends: 'none', tokens: [200, 200, 201] },
  { change: 'PUT /user/{id} introReviewed', act: (w) => ok(w.h.request('PUT', `/user/${w.target}`, { body: { introReviewed: true } })), ends: 'none', tokens: [200, 200, 201] },
  { change: 'PUT /user/{id} login', act: (w) => ok(w.h.request('PUT', `/user/${w.target}`, { body: { login: `renamed-${w.target}` } })), ends: 'none', tokens: [200, 200, 201] },
  {
    change: 'role raised (client to admin)',
    act: (w) => ok(w.h.request('PUT', `/user/${w.target}`, { body: { role: 0 } })),
    ends: 'none',
    tokens: [200, 200, 201]
  },
  { change: 'a new network assigned', act: (w) => ok(w.h.request('PUT', `/user/${w.target}/network/${w.netB}`)), ends: 'none', tokens: [200, 200, 201] },
  { change: 'a new device type assigned', act: (w) => ok(w.h.request('PUT', `/user/${w.target}/devicetype/${w.dtB}`)), ends: 'none', tokens: [200, 200, 201] },
  { change: 'all device types allowed', act: (w) => ok(w.h.request('PUT', `/user/${w.target}/devicetype/all`)), ends: 'none', tokens: [200, 200, 201] },
  { change: 'an unrelated network deleted', act: (w) => ok(w.h.request('DELETE', `/network/${w.netB}`)), ends: 'none', tokens: [200, 200, 201] },
  { change: 'an unrelated device type deleted', act: (w) => ok(w.h.request('DELETE', `/devicetype/${w.dtB}`)), ends: 'none', tokens: [200, 200, 201] },
  {
    change: 'a network the user had deleted',
    act: (w) => ok(w.h.request('DELETE', `/network/${w.netA}`, { query: { force: 'true' } })),
    ends: 'all',
    tokens: [200, 200, 201],
    deviceGone: true
  },
  {
    change: 'a device type the user had deleted',
    act: (w) => ok(w.h.request('DELETE', `/devicetype/${w.dtA}`, { query: { force: 'true' } })),
    ends: 'all',
    tokens: [200, 200, 201],
    deviceGone: true
  },
  { change: 'its network unassigned', act: (w) => ok(w.h.request('DELETE', `/user/${w.target}/network/${w.netA}`)), ends: 'all', tokens: [200, 200, 201] },
  { change: 'its device type unassigned', act: (w) => ok(w.h.request('DELETE', `/user/${w.target}/devicetype/${w.dtA}`)), ends: 'all', tokens: [200, 200, 201] },
  {
    change: 'all device types disallowed (it had them through the flag)',
    target: { allDeviceTypesAvailable: true },
    act: (w) => ok(w.h.request('DELETE', `/user/${w.target}/devicetype/all`)),
    ends: 'all',
    tokens: [200, 200, 201]
  },
  {
    change: 'role lowered (admin to client)',
    target: { role: 0 },
    act: (w) => ok(w.h.request('PUT', `/user/${w.target}`, { body: { role: 1 } })),
    ends: 'all',
    tokens: [401, 401, 401]
  },
  { change: 'status LOCKED', act: (w) => ok(w.h.request('PUT', `/user/${w.target}`, { body: { status: 1 } })), ends: 'all', tokens: [401, 401, 401] },
  {
    change: 'status LOCKED by the lockout policy (user.login.maxAttempts)',
    act: async (w) => {
      await w.h.store.configuration.put('user.login.maxAttempts', '1')
      const user = (await w.h.store.users.findById(w.target))!
      await ok(w.h.request('POST', '/token', { token: null, body: { login: user.login, password: 'wrong-password' } }), 401)
    },
    ends: 'all',
    tokens: [401, 401, 401]
  },
  { change: 'status DISABLED', act: (w) => ok(w.h.request('PUT', `/user/${w.target}`, { body: { status: 2 } })), ends: 'all', tokens: [401, 401, 401] },
  { change: 'user deleted', act: (w) => ok(w.h.request('DELETE', `/user/${w.target}`)), ends: 'all', tokens: [401, 401, 401] },
  {
    change: 'own password over REST (PUT /user/current with T1)',
    act: (w) => ok(w.h.request('PUT', '/user/current', { token: w.t1, body: { password: 'changed-password-1' } })),
    ends: 'others',
    tokens: [200, 401, 401]
  },
  {
    change: 'own password over WebSocket (user/updateCurrent on T1\'s socket)',
    act: async (w) => {
      const reply = await w.ws1.request({ action: 'user/updateCurrent', user: { password: 'changed-password-2' } })
      if (reply.status !== 'success') throw new Error(JSON.stringify(reply))
    },
    ends: 'others',
    tokens: [200, 401, 401]
  },
  {
    change: 'an administrator changes its password',
    act: (w) => ok(w.h.request('PUT', `/user/${w.target}`, { body: { password: 'changed-password-3' } })),
    ends: 'all',
    tokens: [401, 401, 401]
  }
]

async function created (h: TestApp, path: string, name: string): Promise<number> {
  const res = await h.request('POST', path, { body: { name } })
  if (res.status !== 201) throw new Error(`${path}: ${res.status}`)
  return res.body.id as number
}

/**
 * Opens an event stream with `token` and reads it until `done` holds for its text (then drops the
 * connection) or the server ends it. `status` resolves with the response status.
 */
function openStream (url: string, token: string, done: (text: string) => boolean): { status: Promise<number>, read: Promise<{ text: string, ended: boolean }>, drop: () => void } {
  let text = ''
  let resolveStatus!: (status: number) => void
  const status = new Promise<number>((resolve) => { resolveStatus = resolve })
  let request: ClientRequest | undefined
  const read = new Promise<{ text: string, ended: boolean }>((resolve, reject) => {
    request = get(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      resolveStatus(res.statusCode ?? 0)
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
        if (done(text)) {
          resolve({ text, ended: false })
          request?.destroy()
        }
      })
      res.on('end', () => resolve({ text, ended: true }))
      res.on('error', () => undefined)
    })
    request.on('error', (error) => reject(error))
  })
  read.catch(() => undefined)
  return { status, read, drop: () => request?.destroy() }
}

async function subscribed (t: TestContext, h: TestApp, token: string, deviceId: string): Promise<TestSocket> {
  const ws = await connectAs(t, h, token)
  const reply = await ws.request({ action: 'notification/subscribe', deviceId })
  if (reply.status !== 'success') throw new Error(JSON.stringify(reply))
  return ws
}

/**
 * A second access token of the user, distinct from `than`: two logins within one millisecond
 * carry the same claims and so are the same token.
 */
async function anotherToken (h: TestApp, userId: number, than: string): Promise<string> {
  for (;;) {
    const { accessToken } = await h.hub.tokens.issueForUser(userId)
    if (accessToken !== than) return accessToken
    await new Promise((resolve) => setImmediate(resolve))
  }
}

const names = (ws: TestSocket): string[] => ws.pushes.map((p) => p.notification.notification as string)

/**
 * Drops the `revoke` events `h`'s bus is given until the returned function is called, as a
 * PostgreSQL LISTEN connection that was down loses them; that function then publishes the
 * `resync` its reconnect sends.
 */
function loseRevokes (h: TestApp): () => Promise<void> {
  const bus = h.hub.bus
  const publish = bus.publish
  bus.publish = (event, tx) => event.kind === 'revoke' ? Promise.resolve() : publish.call(bus, event, tx)
  return async () => {
    bus.publish = publish
    await bus.publish({ kind: 'resync' })
  }
}

// Each change twice: its `revoke` heard, and its `revoke` lost with a `resync` after it (the
// rights of every wait are checked again then, so the same waits end and the same go on).
for (const [row, lost] of ROWS.flatMap((row) => [[row, false], [row, true]] as const)) {
  t.test(lost ? `${row.change}, its revoke lost (a resync)` : row.change, async (t) => {
    const h = await createTestApp(t)
    const base = await listen(t, h)
    const [netA, netB, netC] = [await created(h, '/network', 'net-a'), await created(h, '/network', 'net-b'), await created(h, '/network', 'net-c')]
    const [dtA, dtB, dtC] = [await created(h, '/devicetype', 'dt-a'), await created(h, '/devicetype', 'dt-b'), await created(h, '/devicetype', 'dt-c')]
    const mine = await addDevice(h, 'mine', { networkId: netA, deviceTypeId: dtA })
    const theirs = await addDevice(h, 'theirs', { networkId: netC, deviceTypeId: dtC })
    const flag = row.target?.allDeviceTypesAvailable ?? false
    const target = await h.createUser({ role: row.target?.role ?? 1, networkIds: [netA], deviceTypeIds: flag ? [] : [dtA], allDeviceTypesAvailable: flag })
    const t1 = target.accessToken
    const t2 = await anotherToken(h, target.user.id, t1)
    const bystander = await h.createUser({ networkIds: [netC], deviceTypeIds: [dtC], allDeviceTypesAvailable: false })

    const dispatcher = h.hub.router
    const before = dispatcher.size
    const openBefore = h.hub.stats.parkedPolls
    const ws1 = await subscribed(t, h, t1, mine)
    const ws2 = await subscribed(t, h, t2, mine)
    const other = await subscribed(t, h, bystander.accessToken, theirs)
    const poll = (token: string) => h.request('GET', `/device/${mine}/notification/poll`, { token, query: { waitTimeout: 30 } })
    const poll1 = poll(t1)
    const poll2 = poll(t2)
    const sse = openStream(`${base}/device/${mine}/notification/stream`, t2, (text) => text.includes('"after"'))
    t.teardown(sse.drop)
    t.equal(await sse.status, 200)
    const sseRead = sse.read
    // Three subscriptions, two parked polls, one event stream: every wait is registered, and has
    // opened. A stream registers with the router first and reads the log's mark after: a poll
    // without a cursor whose mark is read after the change's notification was committed takes
    // that notification as history, not as news (seen once on PostgreSQL, a 30 s poll answering
    // []). The waiter registry (`parkedPolls`) counts a stream once its mark is read.
    await eventually(() => dispatcher.size === before + 6 && h.hub.stats.parkedPolls === openBefore + 6)

    const resync = lost ? loseRevokes(h) : undefined
    await row.act({ h, target: target.user.id, netA, netB, dtA, dtB, ws1, t1 })
    await resync?.()

    if (row.deviceGone !== true) await ok(h.request('POST', `/device/${mine}/notification`, { body: { notification: 'after' } }), 201)
    await ok(h.request('POST', `/device/${theirs}/notification`, { body: { notification: 'after' } }), 201)

    // Another user's subscription always goes on.
    await other.waitForPushes(1)
    t.same(names(other), ['after'], 'the bystander receives what comes after the change')

    const endsT1 = row.ends === 'all'
    const endsT2 = row.ends !== 'none'
    const [answer1, answer2, streamed] = await Promise.all([poll1, poll2, sseRead])
    if (endsT1) {
      t.equal(await ws1.closed, 1008, 'T1\'s subscription closes with 1008')
      t.same(answer1.body, [], 'T1\'s parked poll answers []')
    } else {
      await ws1.waitForPushes(1)
      t.same(names(ws1), ['after'], 'T1\'s subscription goes on')
      t.same(answer1.body.map((n: { notification: string }) => n.notification), ['after'], 'T1\'s parked poll goes on')
    }
    if (endsT2) {
      t.equal(await ws2.closed, 1008, 'T2\'s subscription closes with 1008')
      t.same(answer2.body, [], 'T2\'s parked poll answers []')
      t.ok(streamed.ended && !streamed.text.includes('"after"'), 'T2\'s event stream ends')
    } else {
      await ws2.waitForPushes(1)
      t.same(names(ws2), ['after'], 'T2\'s subscription goes on')
      t.same(answer2.body.map((n: { notification: string }) => n.notification), ['after'], 'T2\'s parked poll goes on')
      t.ok(!streamed.ended && streamed.text.includes('"after"'), 'T2\'s event stream goes on')
    }

    const current = async (token: string) => (await h.request('GET', '/user/current', { token })).status
    const refreshed = (await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: target.refreshToken } })).status
    t.same([await current(t1), await current(t2), refreshed], row.tokens, 'T1, T2 and R1 after the change')
    if (!endsT1) {
      const reply = await ws1.request({ action: 'user/getCurrent' })
      t.equal(reply.status, row.tokens[0] === 200 ? 'success' : 'error', 'T1\'s socket acts under its token')
    }
    t.equal((await h.request('GET', '/user/current', { token: bystander.accessToken })).status, 200, 'the bystander\'s token works')
    // Closed here, before the server's close (which would wait for open connections).
    sse.drop()
    for (const ws of [ws1, ws2, other]) ws.socket.terminate()
  })
}

t.test('a password change by one token spares nothing of another: a refresh token mints nothing after it', async (t) => {
  const h = await createTestApp(t)
  const user = await h.createUser()
  t.equal((await h.request('PUT', '/user/current', { token: user.accessToken, body: { password: 'changed-password-4' } })).status, 204)
  const refreshed = await h.request('POST', '/token/refresh', { token: null, body: { refreshToken: user.refreshToken } })
  t.equal(refreshed.status, 401, 'the refresh token of the pair is revoked')
  // The kept token mints new tokens under the new version; a later loss revokes it too.
  const minted = await h.request('POST', '/token/create', { token: user.accessToken, body: { userId: user.user.id, actions: ['GetCurrentUser'] } })
  t.equal(minted.status, 201)
  t.equal((await h.request('GET', '/user/current', { token: minted.body.accessToken })).status, 200)
  t.equal((await h.request('PUT', `/user/${user.user.id}`, { body: { status: 1 } })).status, 204)
  t.equal((await h.request('GET', '/user/current', { token: user.accessToken })).status, 401, 'a status leaving ACTIVE revokes the kept token')
  await h.request('PUT', `/user/${user.user.id}`, { body: { status: 0 } })
  t.equal((await h.request('GET', '/user/current', { token: user.accessToken })).status, 401, 'and it stays revoked when the account comes back')
  t.equal((await h.request('GET', '/user/current', { token: minted.body.accessToken })).status, 401)
})

t.test('a second password change by the same token keeps it; one by another token revokes it', async (t) => {
  const h = await createTestApp(t)
  const user = await h.createUser()
  const other = await anotherToken(h, user.user.id, user.accessToken)
  t.equal((await h.request('PUT', '/user/current', { token: user.accessToken, body: { password: 'changed-password-5' } })).status, 204)
  t.equal((await h.request('PUT', '/user/current', { token: user.accessToken, body: { password: 'changed-password-6' } })).status, 204)
  t.equal((await h.request('GET', '/user/current', { token: user.accessToken })).status, 200, 'the same token again')
  t.equal((await h.request('GET', '/user/current', { token: other })).status, 401)
  const fresh = await h.request('POST', '/token', { token: null, body: { login: user.user.login, password: 'changed-password-6' } })
  t.equal(fresh.status, 201)
  t.equal((await h.request('PUT', '/user/current', { token: fresh.body.accessToken, body: { password: 'changed-password-7' } })).status, 204)
  t.equal((await h.request('GET', '/user/current', { token: fresh.body.accessToken })).status, 200, 'the new changer is kept')
  t.equal((await h.request('GET', '/user/current', { token: user.accessToken })).status, 401, 'the earlier changer is not any more')
})

t.test('a demotion that also changes the caller\'s password spares no token', async (t) => {
  const h = await createTestApp(t)
  const admin = await h.createUser({ role: 0 })
  const res = await h.request('PUT', '/user/current', { token: admin.accessToken, body: { role: 1, password: 'changed-password-8' } })
  t.equal(res.status, 204)
  t.equal((await h.request('GET', '/user/current', { token: admin.accessToken })).status, 401, 'a loss of rights revokes the caller\'s token too')
})
