/** Plugin proxy actions over real sockets: every action, reply and error of contract §2-§3, P2-P4, P9-P12. */
import t from 'tap'
import { eventually, sleep } from '../../fixtures/messaging.js'
import type { Frame } from '../../fixtures/plugin-proxy.js'
import { registerPlugin, startProxy, subscribed } from '../../fixtures/plugin-proxy.js'

const HEALTH = { prx: 'Available', mb: 'Available', mbfp: '0.00', comm: 'Available' }

/** The raw text of a frame, to check key order. */
function keys (frame: Frame): string[] {
  return Object.keys(frame)
}

t.test('health needs no authentication; replies echo id and t, omit a missing a', async (t) => {
  const p = await startProxy(t)
  const c = await p.connect()
  const reply = await c.request({ t: 'health' })
  t.same(reply, { id: 'r1', t: 'health', s: 0, p: HEALTH })
  t.same(keys(reply), ['id', 't', 's', 'p'])
  c.send({ t: 'health', a: 'anything', p: 5 })
  const bare = await c.waitFor((f) => f.id === undefined && f.t === 'health')
  t.same(bare, { t: 'health', a: 'anything', s: 0, p: HEALTH })
  const numeric = await (async () => {
    c.send({ id: 42, t: 'health' })
    return c.waitFor((f) => f.id === 42)
  })()
  t.same(numeric, { id: 42, t: 'health', s: 0, p: HEALTH })
})

t.test('malformed frames are answered, the connection stays open', async (t) => {
  const p = await startProxy(t)
  const c = await p.connect()
  c.send('{"t": ')
  const parse = await c.waitFor((f) => f.t === 'ack')
  t.equal(parse.s, 1)
  t.equal(parse.id, undefined)
  t.type(parse.p.m, 'string')
  t.ok(parse.p.m.length > 0)
  // A non-object message counts as {}: unauthenticated, so not authorized, t = ack.
  c.send('5')
  c.send('null')
  await eventually(() => c.frames.length >= 3)
  t.same(c.frames.slice(1), [
    { t: 'ack', s: 1, p: { m: 'Plugin not authorized' } },
    { t: 'ack', s: 1, p: { m: 'Plugin not authorized' } }
  ])
  // Binary frames are read as UTF-8.
  c.ws.send(Buffer.from('{"id":"bin","t":"health"}'), { binary: true })
  t.same(await c.waitFor((f) => f.id === 'bin'), { id: 'bin', t: 'health', s: 0, p: HEALTH })
  t.same(await c.request({ t: 'health' }), { id: 'r1', t: 'health', s: 0, p: HEALTH })
})

t.test('before authenticate only plugin/* and health are served', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const c = await p.connect()
  for (const [t1, a] of [['topic', 'subscribe'], ['topic', 'unsubscribe'], ['topic', 'create'], ['topic', 'list'], ['notif', 'create'], ['other', 'x']]) {
    const reply = await c.request({ t: t1, a, p: { t: [plugin.topicName] } })
    t.same(reply, { id: reply.id, t: t1, a, s: 1, p: { m: 'Plugin not authorized' } }, `${t1}/${a}`)
  }
  const noType = await c.request({ a: 'subscribe' })
  t.same(noType, { id: noType.id, t: 'ack', a: 'subscribe', s: 1, p: { m: 'Plugin not authorized' } })
  const badPlugin = await c.request({ t: 'plugin', a: 'create' })
  t.same(badPlugin.p, { m: 'Unsupported plugin message action: create' })
  const noAction = await c.request({ t: 'plugin' })
  t.same(noAction, { id: noAction.id, t: 'plugin', s: 1, p: { m: 'Unsupported plugin message action: undefined' } })
})

t.test('plugin/authenticate: every check in order, then ACTIVE', async (t) => {
  const clock = { now: () => Date.now() }
  const p = await startProxy(t, { app: { clock } })
  const plugin = await registerPlugin(p.h)
  const other = await registerPlugin(p.h)
  const c = await p.connect()
  const auth = async (payload: unknown): Promise<Frame> => c.request({ t: 'plugin', a: 'authenticate', p: payload })
  const message = async (payload: unknown): Promise<string> => (await auth(payload)).p.m

  t.equal(await message(undefined), 'Payload should consist property "token" to authenticate plugin')
  t.equal(await message({}), 'Payload should consist property "token" to authenticate plugin')
  t.equal(await message({ token: '' }), 'Payload should consist property "token" to authenticate plugin')
  t.equal(await message({ token: 7 }), 'Payload should consist property "token" to authenticate plugin')
  t.equal(await message({ token: 'not-a-jwt' }), 'Token is not valid')
  t.equal(await message({ token: p.h.adminToken }), 'Token is not valid', 'a user token')
  const future = Date.now() + 3_600_000
  t.equal(await message({ token: p.h.sign({ tpc: plugin.topicName, a: [16], e: future, t: 0 }) }), 'Invalid token type')
  t.equal(await message({ token: plugin.refreshToken }), 'Invalid token type')
  t.equal(await message({ token: p.h.sign({ tpc: plugin.topicName, a: [16], e: Date.now() - 1000, t: 1 }) }), 'Token has expired')
  t.equal(await message({ token: p.h.sign({ tpc: 'plugin_topic_nope', a: [16], e: future, t: 1 }) }), 'Plugin is not found')
  t.equal(await message({ token: p.h.sign({ tpc: '*', a: [16], e: future, t: 1 }) }), 'Plugin is not found')

  // The owner must be ACTIVE.
  const owner = await p.h.createUser()
  const owned = await registerPlugin(p.h, {}, owner.accessToken)
  await p.h.store.users.update(owner.user.id, { status: 1 })
  t.equal(await message({ token: owned.accessToken }), 'Unauthorized')

  t.equal((await p.h.request('GET', '/plugin', { query: { topicName: plugin.topicName } })).body[0].status, 'CREATED')
  const ok = await auth({ token: plugin.accessToken })
  const claims = p.h.hub.tokens.decode(plugin.accessToken) as { e: number }
  t.same(ok, { id: ok.id, t: 'plugin', a: 'authenticate', s: 0, p: { e: claims.e, t: 1, tpc: plugin.topicName } })
  t.same(keys(ok), ['id', 't', 'a', 's', 'p'])
  const [view] = (await p.h.request('GET', '/plugin', { query: { topicName: plugin.topicName } })).body
  t.equal(view.status, 'ACTIVE', 'authenticate activates (P5)')
  t.type(view.subscriptionId, 'number')

  // P3: the same plugin again refreshes the token; another plugin is refused, the session kept.
  const again = await auth({ token: p.h.sign({ tpc: plugin.topicName, a: [16], e: future, t: 1 }) })
  t.same(again.p, { e: future, t: 1, tpc: plugin.topicName })
  t.equal(await message({ token: other.accessToken }), 'Plugin has no permissions for this operation')
  t.equal((await c.subscribe(plugin.topicName)).s, 0, 'still bound to the first plugin')
  // An inactive plugin authenticates and becomes ACTIVE again.
  await p.h.request('PUT', '/plugin', { query: { topicName: plugin.topicName, status: 'INACTIVE' } })
  t.equal((await auth({ token: plugin.accessToken })).s, 0)
  t.equal((await p.h.request('GET', '/plugin', { query: { topicName: plugin.topicName } })).body[0].status, 'ACTIVE')
})

t.test('topic actions: own topic only, exact payload checks', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const other = await registerPlugin(p.h)
  const c = await p.connect()
  await c.authenticate(plugin.accessToken)
  const topic = plugin.topicName
  const m = async (a: string, payload?: unknown): Promise<string> => (await c.request({ t: 'topic', a, p: payload })).p.m
  const noPermissions = 'Plugin has no permissions for this operation'
  for (const a of ['subscribe', 'unsubscribe', 'create']) {
    t.equal(await m(a, { t: [other.topicName] }), noPermissions, `${a}: another plugin's topic`)
    t.equal(await m(a, { t: [topic, topic] }), noPermissions, `${a}: two topics`)
    t.equal(await m(a, { t: [] }), noPermissions, `${a}: []`)
    t.equal(await m(a, { t: topic }), noPermissions, `${a}: a string`)
  }
  t.equal(await m('subscribe'), 'Payload should consist property "t" with list of topics to subscribe')
  t.equal(await m('subscribe', {}), 'Payload should consist property "t" with list of topics to subscribe')
  t.equal(await m('unsubscribe', { t: null }), 'Payload should consist property "t" with list of topics to unsubscribe')
  t.equal(await m('create', { x: 1 }), 'Payload should consist an array with topics to create')
  t.equal(await m('list'), noPermissions)
  t.equal(await m('delete', { t: [topic] }), 'Unsupported topic message action: delete')
  t.equal(await m(undefined as unknown as string), 'Unsupported topic message action: undefined')
  t.equal(await m('subscribe', { t: [topic], c: 'nonsense' }), 'Payload property "c" should be a cursor received with a delivery')
  t.equal(await m('subscribe', { t: [topic], sg: { a: 1 } }), 'Payload property "sg" should be a string')

  const sub = await c.request({ t: 'topic', a: 'subscribe', p: { t: [topic] } })
  t.same(sub, { id: sub.id, t: 'topic', a: 'subscribe', s: 0, p: { t: [topic] } })
  const grouped = await c.request({ t: 'topic', a: 'subscribe', p: { t: [topic], sg: 'workers' } })
  t.same(grouped.p, { sg: 'workers', t: [topic] })
  t.same(Object.keys(grouped.p), ['sg', 't'])
  const unsub = await c.request({ t: 'topic', a: 'unsubscribe', p: { t: [topic] } })
  t.same(unsub, { id: unsub.id, t: 'topic', a: 'unsubscribe', s: 0, p: { t: [topic] } })
  t.equal((await c.request({ t: 'topic', a: 'unsubscribe', p: { t: [topic] } })).s, 0, 'not subscribed: still a success')
  const create = await c.request({ t: 'topic', a: 'create', p: { t: [topic] } })
  t.same(create, { id: create.id, t: 'topic', a: 'create', s: 0, p: { t: [topic] } })

  t.same((await c.request({ t: 'notif', a: 'create', p: { t: [topic], m: '{}' } })).p, { m: noPermissions }, 'P4: no publishing')
  t.same((await c.request({ t: 'notif' })).p, { m: noPermissions })
  const unknown = await c.request({ t: 'stream', a: 'x' })
  t.same(unknown, { id: unknown.id, t: 'stream', a: 'x', s: 1, p: { m: 'Unsupported message type: stream' } })
  const noType = await c.request({})
  t.same(noType, { id: noType.id, t: 'ack', s: 1, p: { m: 'Unsupported message type: undefined' } })
  t.same(await c.request({ t: 'health' }), { id: 'r' + String(Number(String(noType.id).slice(1)) + 1), t: 'health', s: 0, p: HEALTH })
})

t.test('P10: subscribe and create need an unexpired token; an existing subscription keeps delivering', async (t) => {
  let offset = 0
  const clock = { now: () => Date.now() + offset }
  const p = await startProxy(t, { app: { clock } })
  const plugin = await registerPlugin(p.h)
  const token = p.h.sign({ tpc: plugin.topicName, a: [16], e: Date.now() + 60_000, t: 1 })
  const c = await p.connect()
  t.equal((await c.authenticate(token)).s, 0)
  t.equal((await c.subscribe(plugin.topicName)).s, 0)
  offset = 120_000
  t.equal((await c.subscribe(plugin.topicName, { sg: 'g' })).p.m, 'Token has expired')
  t.equal((await c.request({ t: 'topic', a: 'create', p: { t: [plugin.topicName] } })).p.m, 'Token has expired')
  t.equal((await c.request({ t: 'topic', a: 'unsubscribe', p: { t: [plugin.topicName] } })).s, 0)
  t.equal((await c.request({ t: 'health' })).s, 0)
  t.equal((await c.authenticate(token)).p.m, 'Token has expired')
})

t.test('P9: a batch is handled in order, each element on its own; an empty batch gets no reply', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const c = await p.connect()
  c.send([])
  c.send([
    { id: 'b1', t: 'topic', a: 'subscribe', p: { t: [plugin.topicName] } },
    { id: 'b2', t: 'plugin', a: 'authenticate', p: { token: plugin.accessToken } },
    7,
    { id: 'b3', t: 'topic', a: 'subscribe', p: { t: [plugin.topicName] } },
    { id: 'b4', t: 'health' }
  ])
  await c.waitFor((f) => f.id === 'b4')
  t.same(c.frames.map((f) => [f.id, f.s, f.p?.m]), [
    ['b1', 1, 'Plugin not authorized'],
    ['b2', 0, undefined],
    [undefined, 1, 'Unsupported message type: undefined'],
    ['b3', 0, undefined],
    ['b4', 0, undefined]
  ], 'no reply for [], replies in arrival order, a failure does not stop the batch')
})

t.test('P12: an unauthenticated connection is closed after the timeout', async (t) => {
  const p = await startProxy(t, { pluginProxy: { authTimeoutMs: 150 } })
  const idle = await p.connect()
  const plugin = await registerPlugin(p.h)
  const authed = await subscribed(p, plugin)
  t.same(await idle.closed, { code: 1008, reason: 'Authentication timeout' })
  await sleep(200)
  t.equal(authed.ws.readyState, authed.ws.OPEN, 'an authenticated one stays')
})

t.test('P12: a frame over the limit closes with 1009', async (t) => {
  const p = await startProxy(t, { pluginProxy: { maxFrameBytes: 1024 } })
  const c = await p.connect()
  t.equal((await c.request({ t: 'health', pad: 'x'.repeat(900) })).s, 0, 'under the limit')
  c.send({ t: 'health', pad: 'x'.repeat(2000) })
  t.equal((await c.closed).code, 1009)
})

t.test('P12: a connection that does not read is closed with 1008 when its buffer is full', async (t) => {
  const p = await startProxy(t, { pluginProxy: { maxBufferedBytes: 64 * 1024, maxFrameBytes: 4 * 1024 * 1024 } })
  const c = await p.connect()
  // Stop reading: the kernel buffers fill, then the server's queue grows.
  const raw = (c.ws as unknown as { _socket: { pause(): void, resume(): void } })._socket
  raw.pause()
  const batch = JSON.stringify(Array.from({ length: 100_000 }, () => ({ t: 'health' })))
  c.send(batch)
  await sleep(1500)
  raw.resume()
  const closed = await c.closed
  t.equal(closed.code, 1008)
  t.equal(closed.reason, 'Outbound buffer limit exceeded')
})

t.test('P12: a connection that does not answer pings is terminated', async (t) => {
  const p = await startProxy(t, { pluginProxy: { pingIntervalMs: 100 } })
  const plugin = await registerPlugin(p.h)
  const c = await subscribed(p, plugin)
  let pings = 0
  c.ws.on('ping', () => { pings++ })
  await sleep(350)
  t.ok(pings >= 2, `pinged (${pings})`)
  t.equal(p.h.hub.pluginDelivery.connections, 1, 'answering pongs (ws does so by itself) keeps it open')
  // A client that stops answering: ws answers pings automatically, so stop reading its socket.
  const raw = (c.ws as unknown as { _socket: { pause(): void } })._socket
  raw.pause()
  await eventually(() => p.h.hub.pluginDelivery.connections === 0, 5000)
  t.pass('terminated on the server')
})
