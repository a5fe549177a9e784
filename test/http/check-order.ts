/**
 * The order of DeviceHive's checks, over real sockets (REST with fetch, WebSocket with `ws`), for
 * an administrator, a restricted token and a client token (issue 23, points 4 to 7):
 *
 * - updates of a network or device type look at the id (403 / 404) before the body;
 * - `user/insert` checks the fields before D1's role rule;
 * - an administrator manages assignments by action, not by its token's network list;
 * - a device that does not exist is 404 for every caller in WebSocket `notification/get|list`.
 */
import t from 'tap'
import { Action } from '../../lib/core/auth/actions.js'
import type { TestApp } from '../fixtures/app.js'
import { createTestApp } from '../fixtures/app.js'
import { addDevice, call, listen } from '../fixtures/messaging.js'
import { registerPlugin } from '../fixtures/plugin-proxy.js'
import { registry } from '../fixtures/registry.js'
import type { TestContext } from '../fixtures/store.js'
import type { Frame, TestSocket } from '../fixtures/websocket.js'
import { connectAs } from '../fixtures/websocket.js'

const DENIED = { error: 403, message: 'Access is denied' }

interface Rig {
  h: TestApp
  base: string
  rest: (token: string, method: string, path: string, body?: unknown) => Promise<[number, unknown]>
}

async function rig (t: TestContext): Promise<Rig> {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  return {
    h,
    base,
    async rest (token, method, path, body) {
      const res = await call(`${base}${path}`, token, { method, body })
      return [res.status, res.body]
    }
  }
}

/** The error part of a WebSocket reply, or `success`. */
function outcome (reply: Frame): [number, string] | 'success' {
  return reply.status === 'success' ? 'success' : [reply.code, reply.error]
}

async function ask (ws: TestSocket, frame: Frame): Promise<[number, string] | 'success'> {
  return outcome(await ws.request(frame))
}

t.test('point 4: an update names an id that must exist and be granted before its body is read', async (t) => {
  const { h, rest } = await rig(t)
  const r = registry(h)
  // Restricted in both dimensions: an administrator whose own flag does not override `dt`.
  const narrowUser = await h.createUser({ role: 0, allDeviceTypesAvailable: false })
  const restricted = r.token(narrowUser.user.id, [0], ['1'], ['1'])
  const sockets = { admin: await connectAs(t, h), restricted: await connectAs(t, h, restricted) }
  const tokens = { admin: h.adminToken, restricted }
  const kinds = [
    { path: '/network', action: 'network/update', idField: 'networkId', member: 'network', notFound: 'Network with id = 999999 not found' },
    { path: '/devicetype', action: 'devicetype/update', idField: 'deviceTypeId', member: 'deviceType', notFound: 'Device type with id = 999999 not found' }
  ]
  for (const kind of kinds) {
    for (const who of ['admin', 'restricted'] as const) {
      const expected: [number, unknown] = who === 'admin' ? [404, { error: 404, message: kind.notFound }] : [403, DENIED]
      for (const body of [undefined, { name: 'renamed' }, { name: '' }]) {
        t.same(await rest(tokens[who], 'PUT', `${kind.path}/999999`, body), expected, `${who} PUT ${kind.path}/999999 body ${JSON.stringify(body)}`)
        const frame: Frame = { action: kind.action, [kind.idField]: 999999 }
        if (body !== undefined) frame[kind.member] = body
        t.same(await ask(sockets[who], frame), [expected[0], (expected[1] as { message: string }).message], `${who} ${kind.action} ${JSON.stringify(frame)}`)
      }
      t.same(await ask(sockets[who], { action: kind.action, [kind.idField]: 999999, [kind.member]: null }), [expected[0], (expected[1] as { message: string }).message], `${who} ${kind.action} with a null body`)
    }
  }

  // A missing body on an existing id is `{}`: success, nothing changes.
  const net = await r.network('Kept', 'described')
  const type = await r.deviceType('Kept type', 'described')
  for (const [path, action, idField, member, id] of [['/network', 'network/update', 'networkId', 'network', net], ['/devicetype', 'devicetype/update', 'deviceTypeId', 'deviceType', type]] as const) {
    t.same(await ask(sockets.admin, { action, [idField]: id }), 'success', `${action} without a body`)
    t.same(await ask(sockets.admin, { action, [idField]: id, [member]: null }), 'success', `${action} with a null body`)
    t.same(await rest(h.adminToken, 'PUT', `${path}/${id}`), [204, undefined], `PUT ${path}/${id} without a body`)
    t.same((await rest(h.adminToken, 'GET', `${path}/${id}`))[1], { id, name: path === '/network' ? 'Kept' : 'Kept type', description: 'described', devices: [] }, 'unchanged')
    // A body that is not an object is still malformed, once the id has passed.
    t.same(await ask(sockets.admin, { action, [idField]: id, [member]: 'x' }), [400, member === 'network' ? 'Network is required' : 'Device type is required'])
  }
  // The id check of a restricted token comes first for an id it is granted, too: network 1 exists.
  t.same(await ask(sockets.restricted, { action: 'network/update', networkId: 1 }), 'success', 'a granted id without a body is {}')
  t.same(await ask(sockets.restricted, { action: 'network/update', networkId: net }), [403, 'Access is denied'], 'an existing id it is not granted')
})

t.test('point 5: user/insert checks the fields before the administrator rule (D1)', async (t) => {
  const { h, rest } = await rig(t)
  const client = await h.createUser({ networkIds: [1] })
  const manager = registry(h).token(client.user.id, [Action.ManageUser], ['*'], ['*'])
  const ws = await connectAs(t, h, manager)
  const usersBefore = (await h.request('GET', '/user')).body.length
  for (const role of [0, 1]) {
    const short = { login: `short-${role}`, password: '12345', role }
    t.same(await ask(ws, { action: 'user/insert', user: short }), [400, 'Password can contain only from 6 to 128 symbols!'], `WS short password, role ${role}`)
    t.same(await rest(manager, 'POST', '/user', short), [400, { error: 400, message: 'Password can contain only from 6 to 128 symbols!' }], `REST short password, role ${role}`)
    const taken = { login: 'dhadmin', password: 'long-enough-1', role }
    const duplicate = 'User with such login already exists. Please, select another one'
    t.same(await ask(ws, { action: 'user/insert', user: taken }), [403, duplicate], `WS existing login, role ${role}`)
    t.same(await rest(manager, 'POST', '/user', taken), [403, { error: 403, message: duplicate }], `REST existing login, role ${role}`)
  }
  // D1 is unchanged: a well-formed administrator from a client is refused, and nothing is stored.
  t.same(await ask(ws, { action: 'user/insert', user: { login: 'planted-admin', password: 'planted-1', role: 0 } }), [403, 'Access is denied'])
  t.same(await rest(manager, 'POST', '/user', { login: 'planted-admin', password: 'planted-1', role: 0 }), [403, DENIED])
  t.equal((await h.request('GET', '/user')).body.length, usersBefore, 'no user was created')
  // A client still creates clients.
  const created = await ws.request({ action: 'user/insert', user: { login: 'made-by-client', password: 'client-made-1', role: 1 } })
  t.equal(created.status, 'success')
  // The administrator gets the same field errors.
  const admin = await connectAs(t, h)
  t.same(await ask(admin, { action: 'user/insert', user: { login: 'admin-short', password: '12345', role: 0 } }), [400, 'Password can contain only from 6 to 128 symbols!'])
  t.same(await ask(admin, { action: 'user/insert', user: { login: 'dhadmin', password: '12345', role: 0 } }), [403, 'User with such login already exists. Please, select another one'], 'the login before the password, as in DeviceHive')
})

t.test('point 6: an administrator assigns networks by its action, whatever its token lists', async (t) => {
  const { h, rest } = await rig(t)
  const r = registry(h)
  const target = await h.createUser({})
  const u = target.user.id
  // `networkIds: null` at /token/create: the token names no network at all.
  const minted = await h.request('POST', '/token/create', { body: { userId: 1, actions: ['ManageUser', 'ManageNetwork'], networkIds: null } })
  t.equal(minted.status, 201)
  const adminToken: string = minted.body.accessToken
  const ws = await connectAs(t, h, adminToken)
  // A network created after the token was issued.
  const net = await r.network('Created later')
  const view = { id: net, name: 'Created later', description: null }

  t.same(await ask(ws, { action: 'user/assignNetwork', userId: u, networkId: net }), 'success', 'WS assign')
  t.same((await ws.request({ action: 'user/get', userId: u })).user.networks, [view], 'user/get shows it')
  t.same(await ask(ws, { action: 'user/unassignNetwork', userId: u, networkId: net }), 'success', 'WS unassign')
  t.same(await h.store.users.networkIds(u), [])
  t.same(await rest(adminToken, 'PUT', `/user/${u}/network/${net}`), [204, undefined], 'REST assign')
  t.same((await rest(adminToken, 'GET', `/user/${u}`))[1], { ...(await h.request('GET', `/user/${u}`)).body, networks: [view] }, 'GET /user/{id} shows it')
  t.same(await rest(adminToken, 'DELETE', `/user/${u}/network/${net}`), [204, undefined], 'REST unassign')
  // A network that does not exist is still 404 for it.
  t.same(await ask(ws, { action: 'user/assignNetwork', userId: u, networkId: 999999 }), [404, 'Network with id = 999999 not found'])
  t.same(await rest(adminToken, 'PUT', `/user/${u}/network/999999`), [404, { error: 404, message: 'Network with id = 999999 not found' }])

  // The same for device types: an administrator whose own flag is off, with a token naming type 1 only.
  const typeAdmin = await h.createUser({ role: 0, allDeviceTypesAvailable: false })
  const typeToken = r.token(typeAdmin.user.id, [Action.ManageDeviceType, Action.GetDeviceType], ['*'], ['1'])
  const typeWs = await connectAs(t, h, typeToken)
  const type = await r.deviceType('Later type')
  const typeView = { id: type, name: 'Later type', description: null }
  const narrowTarget = (await h.createUser({ allDeviceTypesAvailable: false })).user.id
  t.same(await rest(typeToken, 'PUT', `/user/${narrowTarget}/devicetype/${type}`), [204, undefined], 'REST assign a type')
  t.same(await rest(typeToken, 'GET', `/user/${narrowTarget}/devicetype/${type}`), [200, { deviceType: typeView }])
  t.same((await typeWs.request({ action: 'user/getDeviceTypes', userId: narrowTarget })).deviceTypes, [typeView], 'user/getDeviceTypes shows it')
  t.same(await ask(typeWs, { action: 'user/unassignDeviceType', userId: narrowTarget, deviceTypeId: type }), 'success', 'WS unassign a type')
  t.same(await ask(typeWs, { action: 'user/allowAllDeviceTypes', userId: narrowTarget }), 'success', 'WS allow all types')
  t.equal((await h.store.users.findById(narrowTarget))?.allDeviceTypesAvailable, true)

  // Everyone else keeps its scope: a client acting on itself neither assigns nor sees a network outside it.
  const client = await h.createUser({ networkIds: [1] })
  const clientToken = r.token(client.user.id, [Action.ManageUser, Action.ManageNetwork], ['1'], ['*'])
  const clientWs = await connectAs(t, h, clientToken)
  t.same(await ask(clientWs, { action: 'user/assignNetwork', userId: client.user.id, networkId: net }), [404, `Network with id = ${net} not found`])
  t.same(await rest(clientToken, 'PUT', `/user/${client.user.id}/network/${net}`), [404, { error: 404, message: `Network with id = ${net} not found` }])
  t.same(await h.store.users.networkIds(client.user.id), [1])
  await h.store.users.assignNetwork(client.user.id, net)
  const self = await clientWs.request({ action: 'user/get', userId: client.user.id })
  t.same(self.user.networks.map((n: { id: number }) => n.id), [1], 'a client\'s own read is limited to its token\'s networks')
})

t.test('point 7: WebSocket notification reads answer 404 for a missing device, to every caller', async (t) => {
  const { h, rest } = await rig(t)
  const r = registry(h)
  const far = await r.network('Far')
  await addDevice(h, 'near-dev', { networkId: 1 })
  await addDevice(h, 'far-dev', { networkId: far })
  const client = await h.createUser({ networkIds: [1] })
  const restricted = r.token(1, [0], ['1'], ['*'])
  const tokens = { admin: h.adminToken, restricted, client: client.accessToken }
  const sockets = { admin: await connectAs(t, h), restricted: await connectAs(t, h, restricted), client: await connectAs(t, h, client.accessToken) }
  const missing = (id: string): [number, string] => [404, `Device with such deviceId = ${id} not found`]

  for (const who of ['admin', 'restricted', 'client'] as const) {
    const ws = sockets[who]
    t.same(await ask(ws, { action: 'notification/list', deviceId: 'missing-dev' }), missing('missing-dev'), `${who} notification/list`)
    t.same(await ask(ws, { action: 'notification/get', deviceId: 'missing-dev', notificationId: 1 }), missing('missing-dev'), `${who} notification/get`)
    // A device outside the caller's scope answers the same 404: nothing tells it that it exists.
    const farAnswer = who === 'admin' ? 'success' : missing('far-dev')
    t.same(await ask(ws, { action: 'notification/list', deviceId: 'far-dev' }), farAnswer, `${who} notification/list of a device outside its scope`)
    t.same(await ask(ws, { action: 'notification/list', deviceId: 'near-dev' }), 'success', `${who} notification/list in scope`)
    t.same(await ask(ws, { action: 'notification/get', deviceId: 'near-dev', notificationId: 999999 }), [404, 'Requested notification not found'])

    // REST and the WebSocket command reads keep D7: 403 for a restricted token, 404 for a full-scope one
    // (DeviceHive's tests expect exactly this for command/get and command/list with client tokens).
    const d7: [number, string] = who === 'admin' ? missing('missing-dev') : [403, 'Access is denied']
    t.same(await ask(ws, { action: 'command/list', deviceId: 'missing-dev' }), d7, `${who} command/list`)
    t.same(await ask(ws, { action: 'command/get', deviceId: 'missing-dev', commandId: 1 }), d7, `${who} command/get`)
    for (const path of ['/device/missing-dev/notification', '/device/missing-dev/notification/1', '/device/missing-dev/command', '/device/missing-dev/command/1']) {
      t.same(await rest(tokens[who], 'GET', path), [d7[0], { error: d7[0], message: d7[1] }], `${who} GET ${path}`)
    }
  }
  // A plugin token: 404 for a missing device too; a device in its reach is refused as over REST (403).
  const plugin = await registerPlugin(h)
  const minted = await h.request('POST', '/token/plugin/create', { body: { tpc: plugin.topicName, a: [Action.GetDeviceNotification], e: Date.now() + 60_000 } })
  t.equal(minted.status, 201)
  const pluginWs = await connectAs(t, h, minted.body.accessToken)
  t.same(await ask(pluginWs, { action: 'notification/list', deviceId: 'missing-dev' }), missing('missing-dev'), 'plugin notification/list')
  t.same(await ask(pluginWs, { action: 'notification/get', deviceId: 'missing-dev', notificationId: 1 }), missing('missing-dev'), 'plugin notification/get')
  t.same(await ask(pluginWs, { action: 'notification/list', deviceId: 'near-dev' }), [403, 'Access is denied'], 'plugin, existing device')
  t.same(await rest(minted.body.accessToken, 'GET', '/device/near-dev/notification'), [403, DENIED], 'plugin over REST')

  // The action still comes first.
  const noRead = r.token(1, [Action.GetDevice], ['*'], ['*'])
  t.same(await ask(await connectAs(t, h, noRead), { action: 'notification/list', deviceId: 'missing-dev' }), [403, 'Access is denied'])
})
