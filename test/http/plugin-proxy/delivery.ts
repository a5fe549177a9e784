/**
 * Plugin delivery over real sockets: the exact event text (§4.2), every filter dimension (§4.3),
 * the owner's scope (P7), status changes mid-stream (§4.4, P5), delete (P8), groups and P11.
 */
import t from 'tap'
import { decodeLogCursor } from '../../../lib/core/realtime/log-cursor.js'
import { addDevice, eventually, sleep } from '../../fixtures/messaging.js'
import type { ProxyClient, ProxyHarness, Registration } from '../../fixtures/plugin-proxy.js'
import { registerPlugin, startProxy, subscribed } from '../../fixtures/plugin-proxy.js'

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

async function notify (p: ProxyHarness, deviceId: string, notification: string, parameters: unknown = null, token?: string): Promise<number> {
  const res = await p.h.request('POST', `/device/${deviceId}/notification`, { token, body: { notification, parameters } })
  if (res.status !== 201) throw new Error(`notify ${res.status} ${res.text}`)
  return res.body.id
}

async function command (p: ProxyHarness, deviceId: string, name: string, body: Record<string, unknown> = {}): Promise<number> {
  const res = await p.h.request('POST', `/device/${deviceId}/command`, { body: { command: name, ...body } })
  if (res.status !== 201) throw new Error(`command ${res.status} ${res.text}`)
  return res.body.id
}

async function updateCommand (p: ProxyHarness, deviceId: string, id: number, body: Record<string, unknown>): Promise<void> {
  const res = await p.h.request('PUT', `/device/${deviceId}/command/${id}`, { body })
  if (res.status !== 204) throw new Error(`update ${res.status} ${res.text}`)
}

/** Sends a marker notification that every filter of these tests lets through, and waits for it. */
async function settle (p: ProxyHarness, client: ProxyClient, deviceId: string, count: number): Promise<void> {
  await notify(p, deviceId, 'marker')
  await client.waitDeliveries(count)
}

/** A proxy with one plugin subscribed and a device whose notification 'one' was delivered. */
async function oneDelivered (t: Parameters<typeof startProxy>[0]) {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const dev = await addDevice(p.h)
  const c = await subscribed(p, plugin)
  await notify(p, dev, 'one')
  const [one] = await c.waitDeliveries(1)
  return { p, plugin, dev, c, one: one! }
}

/** Names of the delivered events, as `kind:name`. */
function delivered (client: ProxyClient): string[] {
  return client.deliveries.map(({ event }) => event.b.notification !== undefined
    ? `n:${event.b.notification.notification}`
    : `${event.b.a === 21 ? 'c' : 'u'}:${event.b.command.command}`)
}

async function status (p: ProxyHarness, plugin: Registration): Promise<string> {
  return (await p.h.request('GET', '/plugin', { query: { topicName: plugin.topicName } })).body[0].status
}

t.test('the delivered JSON of a notification insert, a command insert and a command update (§4.2)', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const dev = await addDevice(p.h)
  const c = await subscribed(p, plugin)
  const nid = await notify(p, dev, 'temperature', { value: 21.5 })
  const cid = await command(p, dev, 'switch-on', { parameters: { port: 3 } })
  // Delivery still reads a command's current row (issue #24: it should send the record its
  // event carries), so the update waits for the insert's delivery: this test pins the wire form.
  await c.waitDeliveries(2)
  await updateCommand(p, dev, cid, { status: 'done', result: { ok: true } })
  const [n, ci, cu] = await c.waitDeliveries(3)

  t.same(Object.keys(n!.frame), ['t', 's', 'st', 'p'])
  t.same(n!.frame, { t: 'notif', s: 0, st: plugin.topicName, p: { m: n!.frame.p.m, c: n!.cursor } })
  t.same(Object.keys(n!.frame.p), ['m', 'c'])
  t.type(n!.frame.p.m, 'string', 'm is JSON text')
  t.same(Object.keys(n!.event), ['b', 'cId', 'l', 'err', 'fld'])
  t.match(n!.event, { cId: UUID, l: false, err: 0, fld: false })
  t.same(Object.keys(n!.event.b), ['notification', 'a'])
  t.equal(n!.event.b.a, 10)
  const stored = (await p.h.request('GET', `/device/${dev}/notification/${nid}`)).body
  t.same(n!.event.b.notification, { id: nid, notification: 'temperature', deviceId: dev, networkId: 1, deviceTypeId: 1, timestamp: stored.timestamp, parameters: { value: 21.5 } })
  t.same(Object.keys(n!.event.b.notification), ['id', 'notification', 'deviceId', 'networkId', 'deviceTypeId', 'timestamp', 'parameters'])

  const commandKeys = ['id', 'command', 'timestamp', 'lastUpdated', 'userId', 'deviceId', 'networkId', 'deviceTypeId', 'parameters', 'lifetime', 'status', 'result', 'isUpdated']
  t.same(Object.keys(ci!.event.b), ['command', 'a'])
  t.equal(ci!.event.b.a, 21)
  t.same(Object.keys(ci!.event.b.command), commandKeys)
  t.match(ci!.event.b.command, { id: cid, command: 'switch-on', timestamp: TS, lastUpdated: TS, userId: 1, deviceId: dev, networkId: 1, deviceTypeId: 1, parameters: { port: 3 }, lifetime: null, status: null, result: null, isUpdated: false })
  t.equal(ci!.event.b.command.timestamp, ci!.event.b.command.lastUpdated)

  t.equal(cu!.event.b.a, 23)
  t.same(Object.keys(cu!.event.b.command), commandKeys)
  t.match(cu!.event.b.command, { id: cid, command: 'switch-on', parameters: { port: 3 }, status: 'done', result: { ok: true }, isUpdated: true })
  t.ok(cu!.event.b.command.lastUpdated >= ci!.event.b.command.lastUpdated)
  t.equal(ci!.event.cId, n!.event.cId, 'one cId per activation')
  t.not(n!.cursor, ci!.cursor)
})

t.test('kinds: notification, command, command_update, each alone', async (t) => {
  const p = await startProxy(t)
  const dev = await addDevice(p.h)
  const onlyNotifications = await registerPlugin(p.h, { returnNotifications: 'true' })
  const onlyCommands = await registerPlugin(p.h, { returnCommands: 'true' })
  const onlyUpdates = await registerPlugin(p.h, { returnUpdatedCommands: 'true' })
  const n = await subscribed(p, onlyNotifications)
  const c = await subscribed(p, onlyCommands)
  const u = await subscribed(p, onlyUpdates)
  await notify(p, dev, 'n1')
  const id = await command(p, dev, 'c1')
  await updateCommand(p, dev, id, { status: 'ok' })
  await notify(p, dev, 'n2')
  const id2 = await command(p, dev, 'c2')
  await updateCommand(p, dev, id2, { status: 'ok' })
  await n.waitDeliveries(2)
  await c.waitDeliveries(2)
  await u.waitDeliveries(2)
  await sleep(100)
  t.same(delivered(n), ['n:n1', 'n:n2'])
  t.same(delivered(c), ['c:c1', 'c:c2'])
  t.same(delivered(u), ['u:c1', 'u:c2'])
})

t.test('networkIds, deviceTypeIds, deviceId (overrides both) and names, updates included', async (t) => {
  const p = await startProxy(t)
  const net2 = await p.h.store.networks.insert({ name: 'net-2', description: null })
  const type2 = await p.h.store.deviceTypes.insert({ name: 'type-2', description: null })
  const d11 = await addDevice(p.h)
  const d21 = await addDevice(p.h, undefined, { networkId: net2 })
  const d12 = await addDevice(p.h, undefined, { deviceTypeId: type2 })
  const d22 = await addDevice(p.h, undefined, { networkId: net2, deviceTypeId: type2 })
  const byNetwork = await subscribed(p, await registerPlugin(p.h, { networkIds: String(net2) }))
  const byType = await subscribed(p, await registerPlugin(p.h, { deviceTypeIds: String(type2) }))
  const byBoth = await subscribed(p, await registerPlugin(p.h, { networkIds: String(net2), deviceTypeIds: String(type2) }))
  // deviceId wins over networkIds/deviceTypeIds that would exclude it.
  const byDevice = await subscribed(p, await registerPlugin(p.h, { deviceId: d11, networkIds: String(net2) }))
  const byName = await subscribed(p, await registerPlugin(p.h, { names: 'temp,go,marker' }))
  for (const dev of [d11, d21, d12, d22]) {
    await notify(p, dev, 'temp')
    await notify(p, dev, 'other')
  }
  const go = await command(p, d11, 'go')
  const stop = await command(p, d11, 'stop')
  await updateCommand(p, d11, go, { status: 'done' })
  await updateCommand(p, d11, stop, { status: 'done' })
  for (const dev of [d11, d21, d12, d22]) await notify(p, dev, 'marker')
  await byNetwork.waitDeliveries(6)
  await byType.waitDeliveries(6)
  await byBoth.waitDeliveries(3)
  await byDevice.waitDeliveries(7)
  await byName.waitDeliveries(10)
  await sleep(150)
  const devices = (c: ProxyClient): string[] => c.deliveries.map(({ event }) => (event.b.notification ?? event.b.command).deviceId)
  t.same(new Set(devices(byNetwork)), new Set([d21, d22]))
  t.equal(byNetwork.deliveries.length, 6)
  t.same(new Set(devices(byType)), new Set([d12, d22]))
  t.equal(byType.deliveries.length, 6)
  t.same(new Set(devices(byBoth)), new Set([d22]))
  t.equal(byBoth.deliveries.length, 3)
  t.same(delivered(byDevice), ['n:temp', 'n:other', 'c:go', 'c:stop', 'u:go', 'u:stop', 'n:marker'])
  t.same(delivered(byName), ['n:temp', 'n:temp', 'n:temp', 'n:temp', 'c:go', 'u:go', 'n:marker', 'n:marker', 'n:marker', 'n:marker'])
})

t.test('$device-add and $device-update only when names lists them (R3)', async (t) => {
  const p = await startProxy(t)
  const all = await subscribed(p, await registerPlugin(p.h))
  const system = await subscribed(p, await registerPlugin(p.h, { names: '$device-add,marker' }))
  const res = await p.h.request('PUT', '/device/sys-dev-1', { body: { name: 'x', networkId: 1, deviceTypeId: 1 } })
  t.equal(res.status, 204)
  await settle(p, all, 'sys-dev-1', 1)
  await system.waitDeliveries(2)
  t.same(delivered(all), ['n:marker'])
  t.same(delivered(system), ['n:$device-add', 'n:marker'])
})

t.test('P7: the owner\'s current scope decides; a locked owner gets nothing', async (t) => {
  const p = await startProxy(t)
  const net2 = await p.h.store.networks.insert({ name: 'scope-net-2', description: null })
  const inside = await addDevice(p.h)
  const outside = await addDevice(p.h, undefined, { networkId: net2 })
  const owner = await p.h.createUser({ networkIds: [1] })
  // Registered with a token granting all networks: the plugin follows the owner's assignments.
  const all = p.h.sign({ u: owner.user.id, a: [], n: ['*'], dt: ['*'], e: Date.now() + 3_600_000, t: 1 })
  const plugin = await registerPlugin(p.h, {}, all)
  const c = await subscribed(p, plugin)
  await notify(p, outside, 'hidden')
  await notify(p, inside, 'seen')
  await c.waitDeliveries(1)
  // Assigning the network later opens it at once.
  await p.h.store.users.assignNetwork(owner.user.id, net2)
  await sleep(1100) // the read cache's bound on staleness
  await notify(p, outside, 'now-seen')
  await c.waitDeliveries(2)
  t.same(delivered(c), ['n:seen', 'n:now-seen'])
  await p.h.request('PUT', `/user/${owner.user.id}`, { body: { status: 1 } })
  await notify(p, inside, 'while-locked')
  await sleep(300)
  t.same(delivered(c), ['n:seen', 'n:now-seen'], 'deliveries stop while the owner is locked')
})

t.test('status mid-stream: INACTIVE stops at once, ACTIVE again delivers only later events', async (t) => {
  const { p, plugin, dev, c } = await oneDelivered(t)
  t.equal((await p.h.request('PUT', '/plugin', { query: { topicName: plugin.topicName, status: 'INACTIVE' } })).status, 204)
  await notify(p, dev, 'while-inactive')
  await sleep(200)
  t.same(delivered(c), ['n:one'])
  t.equal((await p.h.request('PUT', '/plugin', { query: { topicName: plugin.topicName, status: 'ACTIVE' } })).status, 204)
  await notify(p, dev, 'two')
  await c.waitDeliveries(2)
  await sleep(100)
  t.same(delivered(c), ['n:one', 'n:two'])
  t.not(c.deliveries[1]!.event.cId, c.deliveries[0]!.event.cId, 'a new activation has a new cId')
  // A filter change together with deactivation applies from the next activation.
  await p.h.request('PUT', '/plugin', { query: { topicName: plugin.topicName, status: 'INACTIVE', names: 'three' } })
  await p.h.request('PUT', '/plugin', { query: { topicName: plugin.topicName, status: 'ACTIVE' } })
  await notify(p, dev, 'skipped')
  await notify(p, dev, 'three')
  await c.waitDeliveries(3)
  await sleep(100)
  t.same(delivered(c), ['n:one', 'n:two', 'n:three'])
})

t.test('an activation made on another instance starts here at its stored cursor, not when this instance sees it', async (t) => {
  const { p, plugin, dev, c, one } = await oneDelivered(t)
  // Another instance deactivated and activated the plugin after 'one' (its mark stored with the
  // new subscription id); this instance heard neither change and learns of it from the row only
  // when the next event, 'two', wakes its consumer: by then its own "now" is past 'two'.
  const row = (await p.h.store.plugins.findByTopic(plugin.topicName))!
  const activationCursor = decodeLogCursor(one.cursor)!
  t.ok(await p.h.store.plugins.update(row.id, { subscriptionId: row.subscriptionId! + 1, activationCursor }))
  await notify(p, dev, 'two')
  await c.waitDeliveries(2)
  await sleep(100)
  t.same(delivered(c), ['n:one', 'n:two'], 'what follows the activation is delivered')
  t.not(c.deliveries[1]!.event.cId, one.event.cId, 'under the new activation')
})

t.test('an activation stored without its cursor (an older version made it) starts here when this instance sees it', async (t) => {
  const { p, plugin, dev, c } = await oneDelivered(t)
  const row = (await p.h.store.plugins.findByTopic(plugin.topicName))!
  t.ok(await p.h.store.plugins.update(row.id, { subscriptionId: row.subscriptionId! + 1, activationCursor: null }))
  // 'two' wakes the consumer, which then starts at this instance's "now": past 'two', never before 'one'.
  await notify(p, dev, 'two')
  await sleep(200)
  await notify(p, dev, 'three')
  await eventually(() => delivered(c).includes('n:three'), 5000)
  await sleep(100)
  t.same(delivered(c), ['n:one', 'n:three'], 'nothing is delivered again; what follows the start is')
})

t.test('P5: the last authenticated connection closing sets INACTIVE', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const a = await subscribed(p, plugin)
  const b = await p.connect()
  await b.authenticate(plugin.accessToken)
  t.equal(await status(p, plugin), 'ACTIVE')
  a.close()
  await a.closed
  await sleep(150)
  t.equal(await status(p, plugin), 'ACTIVE', 'another connection is still there')
  b.close()
  await b.closed
  for (let i = 0; i < 100 && await status(p, plugin) !== 'INACTIVE'; i++) await sleep(20)
  t.equal(await status(p, plugin), 'INACTIVE')
  const [view] = (await p.h.request('GET', '/plugin', { query: { topicName: plugin.topicName } })).body
  t.equal(view.subscriptionId, null)
})

t.test('P8: deleting a plugin closes its connections with 1008; authenticate then fails', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const sub = await subscribed(p, plugin)
  const idle = await p.connect()
  await idle.authenticate(plugin.accessToken)
  const bystander = await subscribed(p, await registerPlugin(p.h))
  t.equal((await p.h.request('DELETE', '/plugin', { query: { topicName: plugin.topicName } })).status, 204)
  t.same(await sub.closed, { code: 1008, reason: 'Plugin is not found' })
  t.same(await idle.closed, { code: 1008, reason: 'Plugin is not found' })
  const again = await p.connect()
  t.equal((await again.authenticate(plugin.accessToken)).p.m, 'Plugin is not found')
  t.equal(bystander.ws.readyState, bystander.ws.OPEN)
})

t.test('sg: members of a group share deliveries; others get everything; P11 re-subscribe', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const dev = await addDevice(p.h)
  const w1 = await subscribed(p, plugin, { sg: 'workers' })
  const w2 = await subscribed(p, plugin, { sg: 'workers' })
  const solo = await subscribed(p, plugin)
  // P11: subscribing again (same group, or none) never duplicates.
  t.equal((await w1.subscribe(plugin.topicName, { sg: 'workers' })).s, 0)
  t.equal((await solo.subscribe(plugin.topicName)).s, 0)
  for (let i = 0; i < 20; i++) await notify(p, dev, `n${i}`)
  await solo.waitDeliveries(20)
  await sleep(200)
  t.equal(solo.deliveries.length, 20)
  t.equal(w1.deliveries.length + w2.deliveries.length, 20, 'each event once in the group')
  t.equal(w1.deliveries.length, 10, 'round robin')
  const names = [...w1.deliveries, ...w2.deliveries].map((d) => d.event.b.notification.notification).sort()
  t.same(names, Array.from({ length: 20 }, (_, i) => `n${i}`).sort())
  // Unsubscribe stops deliveries to that connection.
  t.equal((await solo.request({ t: 'topic', a: 'unsubscribe', p: { t: [plugin.topicName] } })).s, 0)
  await notify(p, dev, 'after')
  await sleep(200)
  t.equal(solo.deliveries.length, 20)
  t.equal(w1.deliveries.length + w2.deliveries.length, 21)
})

t.test('a plugin is a router consumer: registered by its filter while connected, re-keyed by a filter change, woken by a resync, gone with its last connection', async (t) => {
  const p = await startProxy(t)
  const [a, b] = [await addDevice(p.h), await addDevice(p.h)]
  const plugin = await registerPlugin(p.h, { returnNotifications: 'true', deviceId: a })
  const { router } = p.h.hub
  const idle = router.size
  const client = await subscribed(p, plugin)
  t.equal(router.size, idle + 2, "the plugin's channel and the engine's `plugin` listener")
  await notify(p, b, 'other-device')
  await notify(p, a, 'one')
  await client.waitDeliveries(1)

  // A filter change moves the channel's routing keys to the new device.
  const put = await p.h.request('PUT', '/plugin', { query: { topicName: plugin.topicName, status: 'INACTIVE', returnNotifications: 'true', deviceId: b } })
  t.equal(put.status, 204)
  t.equal((await p.h.request('PUT', '/plugin', { query: { topicName: plugin.topicName, status: 'ACTIVE' } })).status, 204)
  // Once the refresh has run (its own kick reads what is there), a new write reaches the channel
  // only through its new keys.
  await sleep(100)
  t.equal(router.size, idle + 2, 'still one registration for the channel')
  await notify(p, b, 'two')
  await client.waitDeliveries(2)

  // Straight into the store (no event, as if the bus lost it): a resync makes the consumer read.
  const silent = await p.h.store.notifications.insert({ notification: 'silent', deviceId: b, networkId: 1, deviceTypeId: 1, parameters: null }, Date.now() + 5)
  await p.h.hub.bus.publish({ kind: 'resync' })
  await client.waitDeliveries(3)
  t.same(client.deliveries.map((d) => d.event.b.notification.notification), ['one', 'two', 'silent'])
  t.equal(client.deliveries[2]!.event.b.notification.id, silent.id)

  client.close()
  await eventually(() => router.size === idle)
  t.equal(router.size, idle, 'the last connection took the channel out of the router')
})
