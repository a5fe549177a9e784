/**
 * Issue 22, point 2: a plugin never reaches further than the token that registered (or last
 * updated) it, and plugin tokens never manage users. The real app; WebSocket over a real socket.
 *
 * The world of every test: a client assigned networks A and B and device types X and Y, one
 * device in (A, X), one in (B, X) and one in (A, Y); a token of that client restricted to A and X.
 */
import t from 'tap'
import type { Test } from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import { ADMIN_PASSWORD, createTestApp } from '../../fixtures/app.js'
import type { TestApp, TestResponse } from '../../fixtures/app.js'
import { addDevice, eventually } from '../../fixtures/messaging.js'
import type { Registration } from '../../fixtures/plugin-proxy.js'
import { registerPlugin } from '../../fixtures/plugin-proxy.js'
import type { TestContext } from '../../fixtures/store.js'
import { connectAs } from '../../fixtures/websocket.js'

const HOUR = 3_600_000
/** Read actions a plugin token is minted with (all in the client set the narrow token holds). */
const READS = [Action.GetNetwork, Action.GetDevice, Action.GetDeviceNotification, Action.GetDeviceCommand, Action.GetDeviceType, Action.ManagePlugin]

interface World {
  h: TestApp
  A: number
  B: number
  X: number
  Y: number
  /** Devices by (network, device type). */
  ax: string
  bx: string
  ay: string
  owner: Awaited<ReturnType<TestApp['createUser']>>
  /** The owner's token restricted to A and X, with the default client actions (ManagePlugin included). */
  narrow: string
}

async function world (t: TestContext): Promise<World> {
  const h = await createTestApp(t)
  const A = 1
  const X = 1
  const B = await h.store.networks.insert({ name: 'reach-B', description: null })
  const Y = await h.store.deviceTypes.insert({ name: 'reach-Y', description: null })
  const ax = await addDevice(h, 'reach-ax')
  const bx = await addDevice(h, 'reach-bx', { networkId: B })
  const ay = await addDevice(h, 'reach-ay', { deviceTypeId: Y })
  const owner = await h.createUser({ networkIds: [A, B], deviceTypeIds: [X, Y], allDeviceTypesAvailable: false })
  const narrow = h.sign({ u: owner.user.id, a: [], n: [String(A)], dt: [String(X)], e: Date.now() + HOUR, t: 1 })
  return { h, A, B, X, Y, ax, bx, ay, owner, narrow }
}

async function mint (h: TestApp, token: string, topic: string, a: number[]): Promise<TestResponse> {
  return h.request('POST', '/token/plugin/create', { token, body: { tpc: topic, a, e: Date.now() + HOUR } })
}

async function pluginToken (t: Test, h: TestApp, token: string, topic: string, a: number[] = READS): Promise<string> {
  const res = await mint(h, token, topic, a)
  t.equal(res.status, 201, 'plugin tokens minted')
  return res.body.accessToken as string
}

const ids = (res: TestResponse): unknown[] => (res.body as Array<{ id: unknown }>).map((row) => row.id)
/** The devices a list of messages comes from, each once. */
const devicesOf = (res: TestResponse): string[] => [...new Set((res.body as Array<{ deviceId: string }>).map((m) => m.deviceId))].sort()

async function notify (h: TestApp, deviceId: string, notification: string): Promise<void> {
  const res = await h.request('POST', `/device/${deviceId}/notification`, { body: { notification } })
  if (res.status !== 201) throw new Error(`notify ${res.status} ${res.text}`)
}

async function command (h: TestApp, deviceId: string, name: string): Promise<void> {
  const res = await h.request('POST', `/device/${deviceId}/command`, { body: { command: name } })
  if (res.status !== 201) throw new Error(`command ${res.status} ${res.text}`)
}

/** Starts a request that parks on the doorbell, and resolves once it is parked. */
async function parked (h: TestApp, start: () => Promise<TestResponse>): Promise<{ result: Promise<TestResponse> }> {
  const before = h.hub.router.size
  const open = h.hub.stats.parkedPolls
  const result = start()
  // Registered with the router, and opened (its mark read: counted by the waiter registry).
  await eventually(() => h.hub.router.size > before && h.hub.stats.parkedPolls > open)
  return { result }
}

/** What the plugin token sees of every read that lists or names data. */
async function reads (h: TestApp, token: string, w: World): Promise<Record<string, unknown>> {
  const as = { token }
  const seen: Record<string, unknown> = {}
  seen.devices = ids(await h.request('GET', '/device', as)).sort()
  seen.deviceCount = (await h.request('GET', '/device/count', as)).body?.count
  seen.networks = ids(await h.request('GET', '/network', as))
  seen.deviceTypes = ids(await h.request('GET', '/devicetype', as))
  seen.networkB = (await h.request('GET', `/network/${w.B}`, as)).status
  seen.deviceTypeY = (await h.request('GET', `/devicetype/${w.Y}`, as)).status
  seen.deviceB = (await h.request('GET', `/device/${w.bx}`, as)).status
  seen.notificationsOfB = (await h.request('GET', `/device/${w.bx}/notification`, as)).status
  seen.commandsOfB = (await h.request('GET', `/device/${w.bx}/command`, as)).status
  const backlog = { timestamp: '2000-01-01T00:00:00.000', waitTimeout: 0 }
  const notifications = await h.request('GET', '/device/notification/poll', { token, query: backlog })
  seen.notificationBacklog = devicesOf(notifications)
  const commands = await h.request('GET', '/device/command/poll', { token, query: backlog })
  seen.commandBacklog = devicesOf(commands)
  seen.pollNamingB = (await h.request('GET', '/device/notification/poll', { token, query: { ...backlog, networkIds: String(w.B) } })).status
  seen.pollNamingY = (await h.request('GET', '/device/command/poll', { token, query: { ...backlog, deviceTypeIds: String(w.Y) } })).status
  return seen
}

/** What the narrow reach (A and X) shows. */
function narrowReads (w: World): Record<string, unknown> {
  return {
    devices: [w.ax],
    deviceCount: 1,
    networks: [w.A],
    deviceTypes: [w.X],
    networkB: 403,
    deviceTypeY: 403,
    deviceB: 403,
    notificationsOfB: 403,
    commandsOfB: 403,
    notificationBacklog: [w.ax],
    commandBacklog: [w.ax],
    pollNamingB: 403,
    pollNamingY: 403
  }
}

async function writeEverywhere (w: World, name: string): Promise<void> {
  for (const device of [w.bx, w.ay, w.ax]) {
    await notify(w.h, device, name)
    await command(w.h, device, name)
  }
}

t.test('a plugin registered by a token restricted to A and X: its tokens read nothing of B or Y', async (t) => {
  const w = await world(t)
  const { h } = w
  await writeEverywhere(w, 'history')
  const plugin = await registerPlugin(h, {}, w.narrow)
  const token = await pluginToken(t, h, w.narrow, plugin.topicName)
  t.same(await reads(h, token, w), narrowReads(w), 'REST reads: only A and X')
  // The owner's own wide login token sees all three: the narrowing is the plugin's, not the user's.
  t.same(ids(await h.request('GET', '/device', { token: w.owner.accessToken })).sort(), [w.ax, w.ay, w.bx].sort())

  // Long polls: B and Y are written first; the answer is the later write in A and X.
  const notificationPoll = await parked(h, () => h.request('GET', '/device/notification/poll', { token, query: { waitTimeout: 30 } }))
  const commandPoll = await parked(h, () => h.request('GET', '/device/command/poll', { token, query: { waitTimeout: 30 } }))
  await writeEverywhere(w, 'live')
  const n = await notificationPoll.result
  const c = await commandPoll.result
  t.same(n.body.map((item: { deviceId: string }) => item.deviceId), [w.ax], 'the notification long poll wakes for A and X only')
  t.same(c.body.map((item: { deviceId: string }) => item.deviceId), [w.ax], 'the command long poll too')

  // WebSocket: the same token, subscriptions without a filter.
  const ws = await connectAs(t, h, token)
  t.equal((await ws.request({ action: 'notification/subscribe' })).status, 'success')
  t.equal((await ws.request({ action: 'command/subscribe' })).status, 'success')
  const refused = await ws.request({ action: 'notification/subscribe', networkIds: [w.B] })
  t.same([refused.status, refused.code], ['error', 403], 'a subscription naming B is refused')
  t.same((await ws.request({ action: 'device/list' })).devices.map((d: { id: string }) => d.id), [w.ax])
  await writeEverywhere(w, 'pushed')
  const pushes = await ws.waitForPushes(2)
  await notify(h, w.ax, 'marker')
  await ws.waitForPushes(3)
  t.same(ws.pushes.map((p) => p.notification?.deviceId ?? p.command?.deviceId), [w.ax, w.ax, w.ax], 'pushes of A and X only, in order')
  t.same(pushes.map((p) => p.notification?.notification ?? p.command?.command), ['pushed', 'pushed'])

  // A filter naming B (or Y) is outside the registering token's reach: the restricted token gets
  // 403, whether or not B exists (D7).
  const outside = await h.request('POST', '/plugin', { token: w.narrow, query: { networkIds: String(w.B) }, body: { name: 'b' } })
  t.same([outside.status, outside.body?.message], [403, 'Access is denied'])
})

t.test('an administrator\'s token restricted to A registers a plugin restricted to A', async (t) => {
  const w = await world(t)
  const { h } = w
  const adminA = h.sign({ u: 1, a: [0], n: [String(w.A)], dt: ['*'], e: Date.now() + HOUR, t: 1 })
  const plugin = await registerPlugin(h, {}, adminA)
  const token = await pluginToken(t, h, adminA, plugin.topicName)
  // Admin 1 may see every device type (allDeviceTypesAvailable): A's two devices.
  t.same(ids(await h.request('GET', '/device', { token })).sort(), [w.ax, w.ay].sort())
  t.same(ids(await h.request('GET', '/network', { token })), [w.A])
  t.equal((await h.request('GET', `/network/${w.B}`, { token })).status, 403)
  // The same admin with a full token registers a plugin that sees everything.
  const full = await registerPlugin(h)
  const fullToken = await pluginToken(t, h, h.adminToken, full.topicName)
  t.same(ids(await h.request('GET', '/device', { token: fullToken })).sort(), [w.ax, w.ay, w.bx].sort())
})

t.test('an update by a narrower token narrows the plugin and ends its tokens\' waits; a wider one widens it', async (t) => {
  const w = await world(t)
  const { h } = w
  // Registered with the owner's login token: it lists A, B and X, Y.
  await writeEverywhere(w, 'history')
  const plugin = await registerPlugin(h, {}, w.owner.accessToken)
  const token = await pluginToken(t, h, w.owner.accessToken, plugin.topicName)
  t.same(ids(await h.request('GET', '/device', { token })).sort(), [w.ax, w.ay, w.bx].sort(), 'wide at first')

  const poll = await parked(h, () => h.request('GET', '/device/notification/poll', { token, query: { waitTimeout: 30 } }))
  const ws = await connectAs(t, h, token)
  t.equal((await ws.request({ action: 'notification/subscribe' })).status, 'success')
  const bystander = await parked(h, () => h.request('GET', '/device/notification/poll', { token: w.owner.accessToken, query: { waitTimeout: 30 } }))

  const update = await h.request('PUT', '/plugin', { token: w.narrow, query: { topicName: plugin.topicName, description: 'narrowed' } })
  t.equal(update.status, 204)
  // Written after the update, in reach before and after it: a poll still parked would return it.
  await notify(h, w.ax, 'after-narrowing')
  const answered = await poll.result
  t.same([answered.status, answered.body], [200, []], 'the parked poll of the plugin token was answered [] by the narrowing')
  t.equal(await ws.closed, 1008, 'its WebSocket session with a subscription closes')
  t.same(await reads(h, token, w), narrowReads(w), 'the same plugin token now reads only A and X')

  // The owner's own poll is not the plugin's: it stayed parked and got the write after the update.
  const owned = await bystander.result
  t.same(owned.body.map((n: { notification: string }) => n.notification), ['after-narrowing'], 'the owner\'s own wait was not revoked')

  // Tokens minted before the narrowing follow it too; the plugin's own token changes nothing.
  t.equal((await h.request('PUT', '/plugin', { token: await pluginToken(t, h, w.narrow, plugin.topicName), query: { description: 'self' } })).status, 204)
  t.same(ids(await h.request('GET', '/device', { token })), [w.ax], 'a plugin token\'s own update does not widen')
  // A narrow token cannot mint for a plugin that reaches further than itself.
  t.equal((await h.request('PUT', '/plugin', { token: w.owner.accessToken, query: { topicName: plugin.topicName, description: 'wide again' } })).status, 204)
  t.same(ids(await h.request('GET', '/device', { token })).sort(), [w.ax, w.ay, w.bx].sort(), 'a wider token widens it again')
  const refused = await mint(h, w.narrow, plugin.topicName, [Action.GetDevice])
  t.same([refused.status, refused.body?.message], [403, 'Access is denied'], 'no plugin token from a token that reaches less than the plugin')

  // Deleting the plugin ends its tokens' waits the same way.
  const last = await parked(h, () => h.request('GET', '/device/notification/poll', { token, query: { waitTimeout: 30 } }))
  t.equal((await h.request('DELETE', '/plugin', { token: w.owner.accessToken, query: { topicName: plugin.topicName } })).status, 204)
  await notify(h, w.ax, 'after-delete')
  const ended = await last.result
  t.same([ended.status, ended.body], [200, []], 'a parked poll of a deleted plugin\'s token was answered [] by the delete')
  t.equal((await h.request('GET', '/device', { token })).status, 401, 'and the token is refused from then on')
})

t.test('unassigning a network from the owner takes it from the plugin at once', async (t) => {
  const w = await world(t)
  const { h } = w
  const plugin = await registerPlugin(h, {}, w.owner.accessToken)
  const token = await pluginToken(t, h, w.owner.accessToken, plugin.topicName)
  t.equal((await h.request('DELETE', `/user/${w.owner.user.id}/network/${w.B}`)).status, 204)
  // Assignments are read on every request (this instance wrote the change, so no cache delay).
  t.same(ids(await h.request('GET', '/device', { token })).sort(), [w.ax, w.ay].sort())
})

t.test('plugin tokens are minted only within the minting token\'s actions, admins included', async (t) => {
  const w = await world(t)
  const { h } = w
  const plugin = await registerPlugin(h)
  const limited = h.sign({ u: 1, a: [Action.ManagePlugin, Action.GetDevice], n: ['*'], dt: ['*'], e: Date.now() + HOUR, t: 1 })
  const more = await mint(h, limited, plugin.topicName, [Action.GetDevice, Action.ManageNetwork])
  t.same([more.status, more.body?.message], [403, 'Access is denied'], 'an admin token without ManageNetwork hands none out')
  t.equal((await mint(h, limited, plugin.topicName, [Action.GetDevice])).status, 201, 'within its own actions')
})

t.test('a plugin token never manages users, its owner included, whatever its actions', async (t) => {
  const w = await world(t)
  const { h } = w
  const other = await h.createUser()
  // An administrator's plugin with every action, and a client's plugin whose token holds ManageUser.
  const adminPlugin: Registration = await registerPlugin(h)
  const adminPluginToken = await pluginToken(t, h, h.adminToken, adminPlugin.topicName, [0])
  const managing = h.sign({ u: w.owner.user.id, a: [...READS, Action.ManageUser, Action.ManageNetwork], n: ['*'], dt: ['*'], e: Date.now() + HOUR, t: 1 })
  const clientPlugin = await registerPlugin(h, {}, managing)
  const clientPluginToken = await pluginToken(t, h, managing, clientPlugin.topicName, [Action.ManageUser, Action.ManageNetwork, Action.GetDevice])

  for (const [token, ownerId] of [[adminPluginToken, 1], [clientPluginToken, w.owner.user.id]] as const) {
    for (const [method, path, body] of [
      ['PUT', `/user/${ownerId}`, { password: 'taken-over-1' }],
      ['GET', `/user/${ownerId}`],
      ['GET', `/user/${other.user.id}`],
      ['PUT', `/user/${other.user.id}`, { password: 'taken-over-1' }],
      ['GET', '/user'],
      ['GET', '/user/count'],
      ['POST', '/user', { login: 'planted-admin', password: 'planted-1', role: 0 }],
      ['DELETE', `/user/${other.user.id}`],
      ['GET', `/user/${ownerId}/network/${w.A}`],
      ['PUT', `/user/${other.user.id}/network/${w.A}`],
      ['DELETE', `/user/${ownerId}/network/${w.A}`],
      ['GET', `/user/${ownerId}/devicetype`],
      ['POST', '/token/create', { userId: ownerId, actions: ['*'], networkIds: ['*'] }]
    ] as const) {
      const res = await h.request(method, path, { token, body })
      t.same([res.status, res.body?.message], [403, 'Access is denied'], `${method} ${path} by a plugin of user ${ownerId}`)
    }
    // `/user/current`: 403 without the action, else 401 (a plugin has no current user).
    const current = await h.request('GET', '/user/current', { token })
    const change = await h.request('PUT', '/user/current', { token, body: { password: 'taken-over-1' } })
    t.same([current.status, change.status], ownerId === 1 ? [401, 401] : [403, 403], `/user/current by a plugin of user ${ownerId}`)
  }
  // Nothing changed: the passwords still log in, no user was planted, the link is still there.
  t.equal((await h.request('POST', '/token', { token: null, body: { login: 'dhadmin', password: ADMIN_PASSWORD } })).status, 201)
  t.equal((await h.request('POST', '/token', { token: null, body: { login: w.owner.user.login, password: w.owner.password } })).status, 201)
  t.equal((await h.request('POST', '/token', { token: null, body: { login: other.user.login, password: other.password } })).status, 201)
  t.equal(await h.store.users.findByLogin('planted-admin'), undefined)
  t.same(await h.store.users.networkIds(w.owner.user.id), [w.A, w.B])

  // WebSocket, the same rule.
  const ws = await connectAs(t, h, adminPluginToken)
  const update = await ws.request({ action: 'user/update', userId: 1, user: { password: 'taken-over-1' } })
  t.same([update.status, update.code], ['error', 403])
  const list = await ws.request({ action: 'user/list' })
  t.same([list.status, list.code], ['error', 403])
  // The plugin token keeps its other rights: the admin's plugin still reads devices.
  t.equal((await h.request('GET', '/device', { token: adminPluginToken })).status, 200)
})
