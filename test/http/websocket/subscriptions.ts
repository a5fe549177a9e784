/** WebSocket subscriptions (auth spec §6.5) and limits (§6.7) over real sockets. */
import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import { webSocketRegistry } from '../../../lib/http/websocket/registry.js'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, call, eventually, listen, sleep, tokenWithActions } from '../../fixtures/messaging.js'
import { registry } from '../../fixtures/registry.js'
import { connect, connectAs } from '../../fixtures/websocket.js'

t.test('reply first, then the backlog, then live pushes: none lost or repeated under concurrent writers', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  const post = (name: string): Promise<unknown> => call(`${base}/device/${device}/notification`, h.adminToken, { method: 'POST', body: { notification: name } })
  const start = Date.now() - 1
  for (let i = 0; i < 30; i++) await post(`early${i}`)
  const ws = await connectAs(t, h)
  const writers = Promise.all([0, 1, 2, 3].map(async (w) => {
    for (let i = 0; i < 40; i++) await post(`w${w}-${i}`)
  }))
  const reply = await ws.request({ action: 'notification/subscribe', deviceId: device, timestamp: start })
  t.equal(reply.status, 'success')
  t.type(reply.subscriptionId, 'number')
  const replyIndex = ws.frames.indexOf(reply)
  await writers
  await ws.waitForPushes(190)
  await sleep(100)
  const pushes = ws.pushes
  t.equal(pushes.length, 190, 'every notification exactly once')
  t.ok(ws.frames.indexOf(pushes[0]!) > replyIndex, 'the reply comes before any push')
  const ids = pushes.map((p) => p.notification.id)
  t.equal(new Set(ids).size, ids.length, 'no repeats')
  t.same(ids, [...ids].sort((a, b) => a - b), 'oldest first, in commit order')
  t.same(pushes.slice(0, 30).map((p) => p.notification.notification), Array.from({ length: 30 }, (_, i) => `early${i}`))
  for (const push of pushes) {
    t.same(Object.keys(push), ['action', 'notification', 'subscriptionId'])
    t.equal(push.subscriptionId, reply.subscriptionId)
  }
  t.same(Object.keys(pushes[0]!.notification), ['id', 'notification', 'deviceId', 'networkId', 'deviceTypeId', 'timestamp', 'parameters'])
})

t.test('backlog caps: notifications 100, commands `limit` (default 20)', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  for (let i = 0; i < 120; i++) {
    await call(`${base}/device/${device}/notification`, h.adminToken, { method: 'POST', body: { notification: `n${i}` } })
    if (i < 30) await call(`${base}/device/${device}/command`, h.adminToken, { method: 'POST', body: { command: `c${i}` } })
  }
  const ws = await connectAs(t, h)
  const n = await ws.request({ action: 'notification/subscribe', deviceId: device, timestamp: 0 })
  const c = await ws.request({ action: 'command/subscribe', deviceId: device, timestamp: '1970-01-01T00:00:00.000' })
  const c5 = await ws.request({ action: 'command/subscribe', deviceId: device, timestamp: 0, limit: 5 })
  await sleep(300)
  const of = (id: number): number => ws.pushes.filter((p) => p.subscriptionId === id).length
  t.equal(of(n.subscriptionId), 100)
  t.equal(of(c.subscriptionId), 20)
  t.equal(of(c5.subscriptionId), 5)
  t.same(ws.pushes.filter((p) => p.subscriptionId === c5.subscriptionId).map((p) => p.command.command), ['c0', 'c1', 'c2', 'c3', 'c4'])
  const negative = await ws.request({ action: 'command/subscribe', limit: -1 })
  t.same([negative.code, negative.error], [400, 'Limit can\'t be less than 0.'])
})

t.test('command subscriptions: inserts as command/insert, updates only with returnUpdatedCommands', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const ws = await connectAs(t, h)
  const inserts = await ws.request({ action: 'command/subscribe', deviceId: device })
  const updates = await ws.request({ action: 'command/subscribe', deviceId: device, returnUpdatedCommands: true })
  const named = await ws.request({ action: 'command/subscribe', names: ['only'] })
  const inserted = await ws.request({ action: 'command/insert', deviceId: device, command: { command: 'go', parameters: { a: 1 } } })
  t.same(Object.keys(inserted.command), ['id', 'timestamp', 'lastUpdated', 'userId'])
  await ws.request({ action: 'command/update', deviceId: device, commandId: inserted.command.id, command: { status: 'done', result: { r: 2 }, command: 'ignored' } })
  await ws.request({ action: 'command/insert', deviceId: device, command: { command: 'only' } })
  await ws.waitForPushes(4)
  await sleep(100)
  const by = (id: number): Array<Record<string, any>> => ws.pushes.filter((p) => p.subscriptionId === id) // eslint-disable-line @typescript-eslint/no-explicit-any
  t.same(by(inserts.subscriptionId).map((p) => [p.action, p.command.command]), [['command/insert', 'go'], ['command/insert', 'only']])
  const update = by(updates.subscriptionId)
  t.equal(update.length, 1)
  t.equal(update[0]!.action, 'command/update')
  t.match(update[0]!.command, { id: inserted.command.id, command: 'go', status: 'done', result: { r: 2 }, parameters: { a: 1 } })
  t.notOk('isUpdated' in update[0]!.command)
  t.same(Object.keys(update[0]!.command), ['id', 'command', 'timestamp', 'lastUpdated', 'userId', 'deviceId', 'networkId', 'deviceTypeId', 'parameters', 'lifetime', 'status', 'result'])
  t.same(by(named.subscriptionId).map((p) => p.command.command), ['only'])
})

t.test('scope at event time: a device created later in a subscribed network is covered; system notifications need names', async (t) => {
  const h = await createTestApp(t)
  const ws = await connectAs(t, h)
  const all = await ws.request({ action: 'notification/subscribe', networkIds: [1], deviceIds: ['ignored-device'] })
  const system = await ws.request({ action: 'notification/subscribe', names: ['$device-add'] })
  t.equal(all.status, 'success', 'deviceIds (plural) is accepted and ignored')
  const saved = await ws.request({ action: 'device/save', deviceId: 'late-device', device: { name: 'Late', networkId: 1 } })
  t.equal(saved.status, 'success')
  await ws.request({ action: 'notification/insert', deviceId: 'late-device', notification: { notification: 'hello' } })
  await ws.waitForPushes(2)
  await sleep(100)
  t.same(ws.pushes.filter((p) => p.subscriptionId === all.subscriptionId).map((p) => p.notification.notification), ['hello'])
  const add = ws.pushes.filter((p) => p.subscriptionId === system.subscriptionId)
  t.equal(add.length, 1)
  t.match(add[0]!.notification, { notification: '$device-add', deviceId: 'late-device', parameters: { id: 'late-device', name: 'Late' } })
})

t.test('subscribe errors: device, networks, device types, empty scope, permissions', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const admin = await connectAs(t, h)
  const cases: Array<[Record<string, unknown>, number, string]> = [
    [{ action: 'notification/subscribe', deviceId: '' }, 400, 'Device id is wrong or empty'],
    [{ action: 'notification/subscribe', deviceId: 'missing' }, 404, 'Device with such deviceId = missing not found'],
    [{ action: 'command/subscribe', networkIds: [999] }, 404, 'Networks with such networkIds wasn\'t found: {[999]}'],
    [{ action: 'command/subscribe', deviceTypeIds: [999] }, 404, 'Device types with such deviceTypeIds wasn\'t found: {[999]}'],
    [{ action: 'command/subscribe', networkIds: 'x' }, 400, 'Invalid request parameters'],
    [{ action: 'notification/subscribe', timestamp: 'yesterday' }, 400, 'Invalid request parameters'],
    [{ action: 'command/subscribe', returnUpdatedCommands: 'maybe' }, 400, 'Invalid request parameters']
  ]
  for (const [frame, code, error] of cases) {
    const reply = await admin.request(frame)
    t.same([reply.code, reply.error], [code, error], JSON.stringify(frame))
  }
  const noActions = await connectAs(t, h, tokenWithActions(h, [Action.GetDevice]))
  for (const action of ['notification/subscribe', 'command/subscribe', 'notification/unsubscribe', 'command/unsubscribe', 'subscription/list']) {
    const reply = await noActions.request({ action })
    t.same([reply.code, reply.error], [403, 'Access is denied'], action)
  }
  const anonymous = await connect(t, h)
  t.equal((await anonymous.request({ action: 'notification/subscribe' })).code, 401)
  const client = await h.createUser({ networkIds: [] })
  const empty = await connectAs(t, h, client.accessToken)
  const refused = await empty.request({ action: 'notification/subscribe' })
  t.same([refused.code, refused.error], [403, 'No access to any device type or network'])
  const restricted = await h.createUser({ networkIds: [1] })
  const other = (await h.store.networks.insert({ name: `other-${process.pid}`, description: null }))
  const r = await connectAs(t, h, restricted.accessToken)
  const hidden = await r.request({ action: 'notification/subscribe', networkIds: [other] })
  t.equal(hidden.code, 403, 'a restricted principal gets 403 for a network it cannot see (D7)')
  t.equal((await r.request({ action: 'notification/subscribe', deviceId: device })).status, 'success')
  t.equal(h.hub.router.size, 1, 'refused subscriptions leave no listener')
})

t.test('subscribe with networkIds / deviceTypeIds: the long polls\' rule and messages (D7, §4.4 by role)', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const mine = await r.network('Mine')
  const theirs = await r.network('Theirs')
  const type = await r.deviceType('Kind')
  const admin = await connectAs(t, h)
  for (const action of ['notification/subscribe', 'command/subscribe']) {
    const networks = await admin.request({ action, networkIds: [1, 999, 998] })
    t.same([networks.code, networks.error], [404, 'Networks with such networkIds wasn\'t found: {[999, 998]}'], `${action}: admin, missing networks`)
    const types = await admin.request({ action, networkIds: [1], deviceTypeIds: [999] })
    t.same([types.code, types.error], [404, 'Device types with such deviceTypeIds wasn\'t found: {[999]}'], `${action}: admin, missing device type`)
    t.equal((await admin.request({ action, networkIds: [mine, theirs], deviceTypeIds: [type] })).status, 'success', `${action}: admin, existing`)
  }
  const poll = await h.request('GET', '/device/notification/poll', { query: { networkIds: '1,999,998', waitTimeout: 0 } })
  t.same(poll.body, { error: 404, message: 'Networks with such networkIds wasn\'t found: {[999, 998]}' }, 'the REST poll answers the same')

  // A restricted admin token is still an administrator: 404 with the ids, as the polls answer.
  const narrowAdmin = await connectAs(t, h, r.token(1, [Action.GetDeviceNotification], [String(mine)], ['*']))
  const outside = await narrowAdmin.request({ action: 'notification/subscribe', networkIds: [theirs] })
  t.same([outside.code, outside.error], [404, `Networks with such networkIds wasn't found: {[${theirs}]}`])

  // Any client: 403 `Access is denied` whether the id exists or not, even with a `*` token.
  const client = await h.createUser({ networkIds: [mine] })
  const restricted = await connectAs(t, h, client.accessToken)
  const star = await connectAs(t, h, r.token(client.user.id, [Action.GetDeviceNotification, Action.GetDeviceCommand], ['*'], ['*']))
  for (const [ws, label] of [[restricted, 'client token'], [star, 'client * token']] as const) {
    for (const frame of [
      { action: 'notification/subscribe', networkIds: [theirs] },
      { action: 'notification/subscribe', networkIds: [999] },
      { action: 'command/subscribe', networkIds: [mine, 999] },
      { action: 'command/subscribe', deviceTypeIds: [999] }
    ]) {
      const reply = await ws.request(frame)
      t.same([reply.code, reply.error], [403, 'Access is denied'], `${label}: ${JSON.stringify(frame)}`)
    }
    t.equal((await ws.request({ action: 'notification/subscribe', networkIds: [mine] })).status, 'success', `${label}: its own network`)
  }
  t.equal(h.hub.router.size, 4, 'only the accepted subscriptions listen')
})

t.test('unsubscribe by id, all of a kind, unknown id; subscription/list by type and permission', async (t) => {
  const h = await createTestApp(t)
  const ws = await connectAs(t, h)
  const n1 = await ws.request({ action: 'notification/subscribe', names: ['a'], timestamp: '2020-01-01T00:00:00.000' })
  const n2 = await ws.request({ action: 'notification/subscribe' })
  const c1 = await ws.request({ action: 'command/subscribe', returnUpdatedCommands: true })
  const list = await ws.request({ action: 'subscription/list' })
  t.same(list.subscriptions.map((s: { subscriptionId: number }) => s.subscriptionId).sort(), [n1.subscriptionId, n2.subscriptionId, c1.subscriptionId].sort())
  t.same(list.subscriptions.find((s: { subscriptionId: number }) => s.subscriptionId === n1.subscriptionId),
    { subscriptionId: n1.subscriptionId, type: 'notification', deviceId: null, networkIds: null, deviceTypeIds: null, names: ['a'], timestamp: '2020-01-01T00:00:00.000' })
  t.same((await ws.request({ action: 'subscription/list', type: 'command' })).subscriptions.map((s: { type: string }) => s.type), ['command'])
  t.equal((await ws.request({ action: 'subscription/list', type: 'other' })).code, 400)

  const wrongKind = await ws.request({ action: 'command/unsubscribe', subscriptionId: n1.subscriptionId })
  t.same([wrongKind.code, wrongKind.error], [404, `Subscription with id ${n1.subscriptionId} was not found`])
  const unknown = await ws.request({ action: 'notification/unsubscribe', subscriptionId: 42 })
  t.same([unknown.code, unknown.error], [404, 'Subscription with id 42 was not found'])
  const one = await ws.request({ action: 'notification/unsubscribe', subscriptionId: n1.subscriptionId })
  t.same(one, { action: 'notification/unsubscribe', requestId: one.requestId, status: 'success' })
  t.equal((await ws.request({ action: 'notification/unsubscribe' })).status, 'success')
  t.same((await ws.request({ action: 'subscription/list' })).subscriptions.map((s: { subscriptionId: number }) => s.subscriptionId), [c1.subscriptionId])
  t.equal(h.hub.router.size, 1)

  const onlyNotifications = await connectAs(t, h, tokenWithActions(h, [Action.GetDeviceNotification]))
  await onlyNotifications.request({ action: 'notification/subscribe' })
  t.equal((await onlyNotifications.request({ action: 'subscription/list', type: 'command' })).subscriptions.length, 0)
  t.equal((await onlyNotifications.request({ action: 'subscription/list' })).subscriptions.length, 1)
})

t.test('another session cannot unsubscribe, and re-authenticating keeps existing subscriptions', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const a = await connectAs(t, h)
  const b = await connectAs(t, h)
  const sub = await a.request({ action: 'notification/subscribe', deviceId: device })
  t.equal((await b.request({ action: 'notification/unsubscribe', subscriptionId: sub.subscriptionId })).code, 404)
  const client = await h.createUser({ networkIds: [1] })
  await a.request({ action: 'authenticate', token: client.accessToken })
  await b.request({ action: 'notification/insert', deviceId: device, notification: { notification: 'still' } })
  await a.waitForPushes(1)
  t.equal(a.pushes[0]!.notification.notification, 'still')
})

t.test('limits: inbound frame above the limit closes with 1009', async (t) => {
  const h = await createTestApp(t, { webSocket: { maxPayload: 1024 } })
  const ws = await connect(t, h)
  ws.sendRaw(JSON.stringify({ action: 'server/info', pad: 'x'.repeat(2000) }))
  t.equal(await ws.closed, 1009)
  await eventually(() => webSocketRegistry(h.app).sessions === 0)
})

t.test('limits: a slow consumer is cut off and leaves nothing behind', async (t) => {
  const h = await createTestApp(t, { webSocket: { maxBufferedBytes: 64 * 1024 } })
  const device = await addDevice(h)
  const reader = await connectAs(t, h)
  await reader.request({ action: 'notification/subscribe', deviceId: device })
  // Stop reading: the server's outbound buffer fills once the socket buffers are full.
  ;(reader.socket as unknown as { _socket: { pause(): void } })._socket.pause()
  const writer = await connectAs(t, h)
  const big = { blob: 'y'.repeat(32 * 1024) }
  const registry = webSocketRegistry(h.app)
  for (let i = 0; i < 600 && registry.sessions > 1; i++) {
    await writer.request({ action: 'notification/insert', deviceId: device, notification: { notification: 'big', parameters: big } })
  }
  await eventually(() => registry.sessions === 1)
  t.equal(registry.subscriptions, 0)
  t.equal(h.hub.router.size, 0)
  t.equal((await writer.request({ action: 'server/info' })).status, 'success', 'other sessions go on')
})

t.test('limits: the server pings, and a peer that never answers is dropped', async (t) => {
  const h = await createTestApp(t, { webSocket: { pingIntervalMs: 100 } })
  const ws = await connectAs(t, h)
  let pings = 0
  ws.socket.on('ping', () => { pings++ })
  await eventually(() => pings >= 2)
  t.ok(pings >= 2)
  // A client that stops answering pings (its socket paused: no pong goes out) is dropped.
  ;(ws.socket as unknown as { _socket: { pause(): void } })._socket.pause()
  ws.socket.pong = () => undefined
  await eventually(() => webSocketRegistry(h.app).sessions === 0, 5000)
  t.equal(webSocketRegistry(h.app).sessions, 0)
})
