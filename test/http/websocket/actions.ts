/** Every action of the WebSocket catalogue (auth spec §6.3, §6.4) with its fields and errors, over a real socket. */
import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import { ACTIONS } from '../../../lib/http/websocket/actions.js'
import { ADMIN_PASSWORD, createTestApp } from '../../fixtures/app.js'
import { addDevice, tokenWithActions } from '../../fixtures/messaging.js'
import { registry } from '../../fixtures/registry.js'
import type { Frame } from '../../fixtures/websocket.js'
import { connect, connectAs } from '../../fixtures/websocket.js'

type Case = [frame: Frame, expected: { code: number, error: string } | ((reply: Frame) => void)]

t.test('the catalogue: success fields and errors of every action', async (t) => {
  const h = await createTestApp(t)
  const ws = await connectAs(t, h)
  const device = await addDevice(h)
  const ok = (check: (reply: Frame) => void) => (reply: Frame): void => {
    t.equal(reply.status, 'success', JSON.stringify(reply))
    check(reply)
  }
  const err = (code: number, error: string): { code: number, error: string } => ({ code, error })
  const keys = (object: object): string[] => Object.keys(object)
  let networkId = 0
  let deviceTypeId = 0
  let userId = 0
  let commandId = 0
  let notificationId = 0

  const cases: Array<Case | (() => Case)> = [
    [{ action: 'server/info' }, ok((r) => t.same(keys(r.info), ['apiVersion', 'serverTimestamp', 'restServerUrl']))],
    [{ action: 'server/cacheInfo' }, ok((r) => t.same(keys(r.cacheInfo), ['serverTimestamp', 'cacheStats']))],
    [{ action: 'cluster/info' }, ok((r) => t.same(keys(r.clusterInfo), ['bootstrap.servers', 'zookeeper.connect']))],

    [{ action: 'token', login: 'dhadmin', password: ADMIN_PASSWORD }, ok((r) => t.same(keys(r).slice(3), ['accessToken', 'refreshToken']))],
    [{ action: 'token', login: 'dhadmin', password: 'wrong' }, err(401, 'Invalid credentials')],
    // #16: an unknown login is worded like a wrong password, so logins cannot be probed (docs/security.md).
    [{ action: 'token', login: 'nobody-here', password: 'x' }, err(401, 'Invalid credentials')],
    [{ action: 'token/create', payload: { userId: 1, actions: ['GetNetwork'] } }, ok((r) => t.type(r.accessToken, 'string'))],
    [{ action: 'token/create' }, err(400, 'Missing or invalid payload in request')],
    [{ action: 'token/create', payload: 'x' }, err(400, 'Missing or invalid payload in request')],
    [{ action: 'token/create', payload: { userId: 999999 } }, err(404, 'User with id = 999999 not found')],
    [{ action: 'token/refresh' }, err(400, 'Missing or invalid payload in request')],
    [{ action: 'token/refresh', refreshToken: 'a.b.c' }, err(401, 'Unauthorized')],

    [{ action: 'configuration/put', name: 'ws-test', value: 'v1' }, ok((r) => t.match(r.configuration, { name: 'ws-test', value: 'v1', entityVersion: 0 }))],
    [{ action: 'configuration/put', name: 'x'.repeat(33), value: 'v' }, err(400, 'Name cannot be empty. The name\'s length should not be more than 32 symbols.')],
    [{ action: 'configuration/get', name: 'ws-test' }, ok((r) => t.equal(r.configuration.value, 'v1'))],
    [{ action: 'configuration/get' }, err(400, 'Configuration name is wrong or empty')],
    [{ action: 'configuration/get', name: 'nope' }, err(404, 'Requested config with name = nope not found in the database')],
    [{ action: 'configuration/delete', name: 'ws-test' }, ok((r) => t.equal(keys(r).length, 3))],
    [{ action: 'configuration/delete', name: 'ws-test' }, err(404, 'Requested config with name = ws-test not found in the database')],

    [{ action: 'network/insert', network: { name: `ws-net-${process.pid}`, description: 'd' } }, ok((r) => {
      t.same(keys(r.network), ['id'])
      networkId = r.network.id
    })],
    [{ action: 'network/insert' }, err(400, 'Network is required')],
    [{ action: 'network/insert', network: { name: `ws-net-${process.pid}` } }, err(403, 'Network cannot be created. Network with such name already exists')],
    () => [{ action: 'network/get', networkId }, ok((r) => t.same(keys(r.network), ['id', 'name', 'description', 'devices']))],
    [{ action: 'network/get' }, err(400, 'Network id is wrong or empty')],
    [{ action: 'network/get', networkId: 999999 }, err(404, 'Network with id = 999999 not found')],
    [{ action: 'network/list', take: 1 }, ok((r) => t.equal(r.networks.length, 1))],
    [{ action: 'network/list', sortField: 'bogus' }, err(400, 'Invalid request parameters')],
    [{ action: 'network/count' }, ok((r) => t.equal(r.count, 2))],
    () => [{ action: 'network/update', networkId, network: { description: 'changed' } }, ok(() => undefined)],
    [{ action: 'network/update', networkId: 999999, network: { name: 'x' } }, err(404, 'Network with id = 999999 not found')],
    [{ action: 'network/delete', networkId: 1 }, (r) => t.equal(r.code, 400, 'a network with devices needs force')],

    [{ action: 'devicetype/insert', deviceType: { name: `ws-dt-${process.pid}` } }, ok((r) => {
      t.same(keys(r.deviceType), ['id'])
      deviceTypeId = r.deviceType.id
    })],
    [{ action: 'devicetype/insert' }, err(400, 'Device type is required')],
    [{ action: 'devicetype/insert', deviceType: { name: `ws-dt-${process.pid}` } }, err(403, 'Device type cannot be created. Device type with such name already exists')],
    () => [{ action: 'devicetype/get', deviceTypeId }, ok((r) => t.same(keys(r.deviceType), ['id', 'name', 'description', 'devices']))],
    [{ action: 'devicetype/get' }, err(400, 'Device type id is wrong or empty')],
    [{ action: 'devicetype/list' }, ok((r) => t.equal(r.deviceTypes.length, 2))],
    [{ action: 'devicetype/count' }, ok((r) => t.equal(r.count, 2))],
    () => [{ action: 'devicetype/update', deviceTypeId, deviceType: { description: 'x' } }, ok(() => undefined)],

    [{ action: 'device/save', deviceId: 'ws-dev', device: { name: 'WS', networkId: 1, deviceTypeId: 1 } }, ok((r) => t.equal(keys(r).length, 3))],
    [{ action: 'device/save', device: { name: 'x' } }, err(400, 'Device id is wrong or empty')],
    [{ action: 'device/save', deviceId: 'bad id', device: { name: 'x' } }, err(400, 'Device Id can only contain letters, digits and dashes.')],
    [{ action: 'device/save', deviceId: 'ws-dev2', device: { name: 'x', networkId: 999999 } }, err(400, 'Invalid request parameters')],
    [{ action: 'device/get', deviceId: 'ws-dev' }, ok((r) => t.same(keys(r.device), ['id', 'name', 'data', 'networkId', 'deviceTypeId', 'isBlocked', 'lastSeen', 'online']))],
    [{ action: 'device/get' }, err(400, 'Device id is wrong or empty')],
    [{ action: 'device/get', deviceId: null }, err(400, 'Device id is wrong or empty')],
    [{ action: 'device/get', deviceId: 999999 }, err(404, 'Device with such deviceId = 999999 not found')],
    [{ action: 'device/list', sortField: 'name', take: 1 }, ok((r) => t.equal(r.devices.length, 1))],
    [{ action: 'device/list', sortField: 'id' }, err(400, 'Invalid request parameters')],
    [{ action: 'device/count', networkId: 1 }, ok((r) => t.equal(r.count, 2))],
    // The REST `search` extension (name or id, any case) on the WebSocket lists too.
    [{ action: 'device/list', search: device.toUpperCase().slice(2) }, ok((r) => t.same(r.devices.map((d: Frame) => d.id), [device]))],
    [{ action: 'device/count', search: 'no-such-device-anywhere' }, ok((r) => t.equal(r.count, 0))],
    [{ action: 'device/list', search: 'x'.repeat(129) }, err(400, 'The search text must be at most 128 characters.')],
    [{ action: 'device/delete', deviceId: 'ws-dev' }, ok(() => undefined)],
    [{ action: 'device/delete', deviceId: 'ws-dev' }, err(404, 'Device with such deviceId = ws-dev not found')],

    [{ action: 'user/insert', user: { login: `ws-user-${process.pid}`, password: 'ws-password-1', role: 1, status: 0 } }, ok((r) => {
      t.same(keys(r.user), ['id', 'lastLogin', 'data', 'introReviewed', 'allDeviceTypesAvailable'])
      userId = r.user.id
    })],
    [{ action: 'user/insert' }, err(400, 'User is required')],
    () => [{ action: 'user/get', userId }, ok((r) => t.equal(r.user.login, `ws-user-${process.pid}`))],
    [{ action: 'user/get' }, err(400, 'User id is wrong or empty')],
    [{ action: 'user/get', userId: 999999 }, err(404, 'User with id = 999999 not found')],
    [{ action: 'user/list', take: 1 }, ok((r) => t.equal(r.users.length, 1))],
    [{ action: 'user/count' }, ok((r) => t.equal(r.count, 2))],
    () => [{ action: 'user/update', userId, user: { data: { a: 1 } } }, ok(() => undefined)],
    [{ action: 'user/getCurrent' }, ok((r) => t.equal(r.current.id, 1))],
    [{ action: 'user/updateCurrent', user: { introReviewed: true } }, ok(() => undefined)],
    () => [{ action: 'user/assignNetwork', userId, networkId: 1 }, ok(() => undefined)],
    () => [{ action: 'user/getNetwork', userId, networkId: 1 }, ok((r) => t.same(keys(r.network), ['network']))],
    () => [{ action: 'user/unassignNetwork', userId, networkId: 1 }, ok(() => undefined)],
    () => [{ action: 'user/getNetwork', userId }, err(400, 'Network id is wrong or empty')],
    () => [{ action: 'user/disallowAllDeviceTypes', userId }, ok(() => undefined)],
    () => [{ action: 'user/assignDeviceType', userId, deviceTypeId: 1 }, ok(() => undefined)],
    () => [{ action: 'user/getDeviceType', userId, deviceTypeId: 1 }, ok((r) => t.same(keys(r.deviceType), ['deviceType']))],
    () => [{ action: 'user/getDeviceTypes', userId }, ok((r) => t.equal(r.deviceTypes.length, 1))],
    () => [{ action: 'user/unassignDeviceType', userId, deviceTypeId: 1 }, ok(() => undefined)],
    () => [{ action: 'user/allowAllDeviceTypes', userId }, ok(() => undefined)],
    () => [{ action: 'user/delete', userId }, ok(() => undefined)],
    [{ action: 'user/delete', userId: 999999 }, err(404, 'User with id = 999999 not found')],

    [{ action: 'command/insert', deviceId: device, command: { command: 'go', parameters: { p: 1 }, lifetime: 60 } }, ok((r) => {
      t.same(keys(r.command), ['id', 'timestamp', 'lastUpdated', 'userId'])
      commandId = r.command.id
    })],
    [{ action: 'command/insert', deviceId: device }, err(400, 'Command is required')],
    [{ action: 'command/insert', deviceId: device, command: { parameters: {} } }, err(400, 'Command is required')],
    [{ action: 'command/insert', command: { command: 'go' } }, err(400, 'Device id is wrong or empty')],
    [{ action: 'command/insert', deviceId: 'missing', command: { command: 'go' } }, err(404, 'Device with such deviceId = missing not found')],
    () => [{ action: 'command/update', deviceId: device, commandId, command: { status: 'done', result: { ok: 1 } } }, ok(() => undefined)],
    [{ action: 'command/update', deviceId: device, commandId: 999999, command: { status: 'x' } }, err(404, 'Command with id = 999999 not found')],
    [{ action: 'command/update', deviceId: device }, err(400, 'Command id is wrong or empty')],
    () => [{ action: 'command/update', commandId }, err(400, 'Device id is wrong or empty')],
    () => [{ action: 'command/get', deviceId: device, commandId }, ok((r) => t.match(r.command, { id: commandId, status: 'done', result: { ok: 1 } }))],
    [{ action: 'command/get', deviceId: device, commandId: 'abc' }, err(400, 'Command id is wrong or empty')],
    [{ action: 'command/get', deviceId: device, commandId: 999999 }, err(404, 'Command with id = 999999 not found')],
    [{ action: 'command/list', deviceId: device, command: 'go' }, ok((r) => t.equal(r.commands.length, 1))],
    [{ action: 'command/list', deviceId: device, names: ['other'] }, ok((r) => t.equal(r.commands.length, 0))],
    [{ action: 'command/list' }, err(400, 'Device id is wrong or empty')],

    [{ action: 'notification/insert', deviceId: device, notification: { notification: 'temp', parameters: { t: 1 } } }, ok((r) => {
      t.same(keys(r.notification), ['id', 'timestamp'])
      notificationId = r.notification.id
    })],
    [{ action: 'notification/insert', deviceId: device }, err(400, 'Notification is required')],
    [{ action: 'notification/insert', deviceId: device, notification: { parameters: {} } }, err(400, 'Notification is required')],
    [{ action: 'notification/insert', deviceId: device, notification: { notification: '$device-add' } },
      err(403, 'It\'s forbidden to insert these special notifications: $device-update, $device-add.')],
    () => [{ action: 'notification/get', deviceId: device, notificationId }, ok((r) => {
      t.same(keys(r.notification), ['id', 'notification', 'deviceId', 'networkId', 'deviceTypeId', 'timestamp', 'parameters'])
    })],
    [{ action: 'notification/get', deviceId: device }, err(400, 'Notification id is wrong or empty')],
    [{ action: 'notification/get', deviceId: device, notificationId: 'abc' }, err(400, 'Notification id should be an integer value.')],
    [{ action: 'notification/get', deviceId: device, notificationId: 999999 }, err(404, 'Requested notification not found')],
    [{ action: 'notification/get', deviceId: 'missing', notificationId: 1 }, err(404, 'Device with such deviceId = missing not found')],
    [{ action: 'notification/list', deviceId: device, notification: 'temp' }, ok((r) => t.equal(r.notifications.length, 1))],
    [{ action: 'notification/list', deviceId: 'missing' }, err(404, 'Device with such deviceId = missing not found')],
    [{ action: 'notification/list' }, err(400, 'Device id is wrong or empty')]
  ]

  for (const entry of cases) {
    const [frame, expected] = typeof entry === 'function' ? entry() : entry
    const reply = await ws.request(frame)
    t.equal(reply.action, frame.action)
    if (typeof expected === 'function') expected(reply)
    else t.same({ code: reply.code, error: reply.error, status: reply.status }, { ...expected, status: 'error' }, JSON.stringify(frame))
  }
})

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jwtPayload = (token: string): any => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).payload
const INVALID = { code: 400, error: 'Invalid request parameters' }
const DENIED = { code: 403, error: 'Access is denied' }
const failure = (reply: Frame): { code: unknown, error: unknown } => ({ code: reply.code, error: reply.error })

t.test('R12 token/create: a single-string action, null lists, digit-string userId succeed exactly as over REST', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({ networkIds: [1] })
  const id = client.user.id
  const ws = await connectAs(t, h)
  const claims = (token: string): unknown => {
    const { e, ...rest } = jwtPayload(token)
    t.type(e, 'number')
    return rest
  }
  const bodies = [
    { userId: String(id), actions: 'GetDevice', networkIds: null, deviceTypeIds: null, expiration: null, refreshExpiration: null },
    { userId: id, actions: ['GetDevice'], networkIds: [1], deviceTypeIds: null, expiration: null, refreshExpiration: null, tokenType: null },
    { userId: String(id), actions: 'RegisterDevice', networkIds: '1', deviceTypeIds: '*' },
    { userId: id, actions: null, networkIds: null }
  ]
  for (const payload of bodies) {
    const reply = await ws.request({ action: 'token/create', payload })
    t.equal(reply.status, 'success', JSON.stringify(payload))
    const rest = await h.request('POST', '/token/create', { body: payload })
    t.equal(rest.status, 201)
    t.same(claims(reply.accessToken), claims(rest.body.accessToken), `same claims as REST: ${JSON.stringify(payload)}`)
    t.same(claims(reply.refreshToken), claims(rest.body.refreshToken))
  }
  t.same(claims((await ws.request({ action: 'token/create', payload: bodies[0] })).accessToken), { u: id, a: [3], n: null, dt: null, t: 1 })

  // Wrong kinds are still refused, with the REST status.
  for (const payload of [{ userId: 'two', actions: ['GetDevice'] }, { userId: id, networkIds: 'abc' }, { userId: id, networkIds: { id: 1 } }, { userId: id, expiration: 'soon' }]) {
    const reply = await ws.request({ action: 'token/create', payload })
    t.equal(reply.code, 400, JSON.stringify(payload))
    t.equal((await h.request('POST', '/token/create', { body: payload })).status, 400)
  }
  t.same(failure(await ws.request({ action: 'token/create', payload: { userId: id, actions: { x: 1 } } })),
    { code: 400, error: 'Actions list should contain only Strings or Integers' })
})

t.test('R12 token/create leniencies grant nothing D1 refuses', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({ networkIds: [1] })
  const other = await h.createUser({ networkIds: [1] })
  const ws = await connectAs(t, h, client.accessToken)
  for (const payload of [
    { userId: String(other.user.id), actions: 'GetDevice' },
    { userId: client.user.id, actions: '*' },
    { userId: String(client.user.id), actions: 'ManageUser', networkIds: null },
    { userId: client.user.id, actions: 'GetDevice', networkIds: '*' },
    { userId: client.user.id, actions: 'GetDevice', networkIds: '2' },
    { userId: String(client.user.id), actions: ['GetDevice'], deviceTypeIds: null, expiration: String(Date.now() + 365 * 86_400_000) }
  ]) {
    t.same(failure(await ws.request({ action: 'token/create', payload })), DENIED, JSON.stringify(payload))
  }
  const own = await ws.request({ action: 'token/create', payload: { userId: String(client.user.id), actions: 'GetDevice', networkIds: '1', deviceTypeIds: null } })
  t.equal(own.status, 'success', 'within its own rights the lenient payload works')
  t.same([jwtPayload(own.accessToken).a, jwtPayload(own.accessToken).n], [[3], ['1']])
})

t.test('R12 device/save: digit-string ids, "TRUE", nulls; wrong kinds get the REST 400; no extra network', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net = await r.network('Lab')
  const other = await r.network('Other')
  const ws = await connectAs(t, h)
  const saved = await ws.request({ action: 'device/save', deviceId: 'ws-d-1', device: { name: 'd', networkId: String(net), deviceTypeId: '1', isBlocked: 'TRUE', data: null } })
  t.equal(saved.status, 'success', JSON.stringify(saved))
  const view = { id: 'ws-d-1', name: 'd', data: null, networkId: net, deviceTypeId: 1, isBlocked: true, lastSeen: null, online: false }
  t.same((await ws.request({ action: 'device/get', deviceId: 'ws-d-1' })).device, view)
  t.equal((await ws.request({ action: 'device/save', deviceId: 'ws-d-1', device: { name: null, networkId: null, deviceTypeId: null, isBlocked: null } })).status, 'success', 'nulls change nothing')
  t.same((await ws.request({ action: 'device/save', deviceId: 'ws-d-1', device: { isBlocked: 'false' } })).status, 'success')
  t.same((await h.request('GET', '/device/ws-d-1')).body, { ...view, isBlocked: false }, 'as REST reads it back')
  for (const device of [{ name: 'd', networkId: 'lab' }, { name: 'd', networkId: { id: net } }, { name: 'd', isBlocked: 'maybe' }, { name: 'd', networkId: '1.5' }, { name: 'd', deviceTypeId: 'one' }]) {
    const reply = await ws.request({ action: 'device/save', deviceId: 'ws-d-1', device })
    const rest = await h.request('PUT', '/device/ws-d-1', { body: device })
    t.same(failure(reply), INVALID, JSON.stringify(device))
    t.same(failure(reply), { code: rest.status, error: rest.body.message }, `same as REST: ${JSON.stringify(device)}`)
  }
  const client = await h.createUser({ networkIds: [net] })
  const restricted = await connectAs(t, h, client.accessToken)
  t.same(failure(await restricted.request({ action: 'device/save', deviceId: 'ws-d-2', device: { name: 'x', networkId: String(other) } })),
    { code: 403, error: 'No access to network!' }, 'a digit string names the same network as the number')
})

t.test('R12 user, network, device type, command and notification payloads', async (t) => {
  const h = await createTestApp(t)
  const ws = await connectAs(t, h)
  const device = await addDevice(h)

  const login = `ws-r12-${process.pid}`
  const created = await ws.request({ action: 'user/insert', user: { login, password: 'ws-password-1', role: '1', status: '0', data: null, introReviewed: 'True', allDeviceTypesAvailable: 'FALSE' } })
  t.equal(created.status, 'success', JSON.stringify(created))
  const userId = created.user.id
  t.same([created.user.introReviewed, created.user.allDeviceTypesAvailable], [true, false])
  t.equal((await ws.request({ action: 'user/update', userId: String(userId), user: { login: null, password: null, role: null, status: '1' } })).status, 'success')
  const stored = await h.store.users.findById(userId)
  t.same([stored?.login, stored?.role, stored?.status], [login, 1, 1])
  t.equal((await ws.request({ action: 'user/insert', user: { login: `${login}-2`, password: 'ws-password-1', role: 'admin' } })).code, 400, 'a word is not a role')

  const client = await h.createUser()
  const self = await connectAs(t, h, client.accessToken)
  t.equal((await self.request({ action: 'user/updateCurrent', user: { login: null, role: null, introReviewed: 'TRUE' } })).status, 'success')
  t.same(failure(await self.request({ action: 'user/updateCurrent', user: { role: '0' } })), { code: 403, error: 'Access is denied' }, 'no admin-only field opens')
  t.same([(await h.store.users.findById(client.user.id))?.role, (await h.store.users.findById(client.user.id))?.introReviewed], [1, true])

  const network = await ws.request({ action: 'network/insert', network: { name: `ws-r12-net-${process.pid}`, description: null } })
  t.equal(network.status, 'success')
  t.equal((await ws.request({ action: 'network/update', networkId: String(network.network.id), network: { name: null, description: 'd' } })).status, 'success')
  t.same((await h.store.networks.findById(network.network.id))?.name, `ws-r12-net-${process.pid}`, 'a null name is an absent one')
  const type = await ws.request({ action: 'devicetype/insert', deviceType: { name: `ws-r12-dt-${process.pid}`, description: null } })
  t.equal(type.status, 'success')
  t.equal((await ws.request({ action: 'devicetype/update', deviceTypeId: type.deviceType.id, deviceType: { name: null, description: null } })).status, 'success')

  const command = await ws.request({ action: 'command/insert', deviceId: device, command: { command: 'go', lifetime: '60', status: null, result: null, parameters: null, timestamp: null } })
  t.equal(command.status, 'success', JSON.stringify(command))
  const read = await ws.request({ action: 'command/get', deviceId: device, commandId: command.command.id })
  t.same([read.command.lifetime, read.command.status], [60, null])
  t.equal((await ws.request({ action: 'command/update', deviceId: device, commandId: command.command.id, command: { status: 'done', result: null } })).status, 'success')
  t.same(failure(await ws.request({ action: 'command/insert', deviceId: device, command: { command: 'go', lifetime: 'long' } })), INVALID)
  const notification = await ws.request({ action: 'notification/insert', deviceId: device, notification: { notification: 'temp', parameters: null, timestamp: null } })
  t.equal(notification.status, 'success', JSON.stringify(notification))
})

t.test('every protected action answers 401 anonymous and 403 without its permission, before reading its fields', async (t) => {
  const h = await createTestApp(t)
  const anonymous = await connect(t, h)
  const none = await connectAs(t, h, tokenWithActions(h, [Action.GetCurrentUser]))
  const publicActions = new Set(['server/info', 'server/cacheInfo', 'cluster/info', 'token', 'token/refresh'])
  for (const action of Object.keys(ACTIONS)) {
    if (publicActions.has(action)) continue
    const anon = await anonymous.request({ action, deviceId: '', userId: 'x' })
    t.same([anon.code, anon.error], [401, 'Unauthorized'], `${action} anonymous`)
    if (action === 'user/getCurrent') continue
    const denied = await none.request({ action, deviceId: '', userId: 'x' })
    t.same([denied.code, denied.error], [403, 'Access is denied'], `${action} without permission`)
  }
})

t.test('no frame answers 500: every action with hostile fields', async (t) => {
  const h = await createTestApp(t)
  await addDevice(h, 'hostile-dev')
  const ws = await connectAs(t, h)
  const hostile: unknown[] = [null, true, -1, 1.5, 1e300, '', 'x'.repeat(300), [], [null], {}, { $gt: 1 }, '../../etc']
  const fields = ['deviceId', 'networkId', 'deviceTypeId', 'userId', 'commandId', 'notificationId', 'subscriptionId', 'name', 'take', 'skip',
    'sortField', 'sortOrder', 'timestamp', 'start', 'end', 'names', 'networkIds', 'deviceTypeIds', 'limit', 'returnUpdatedCommands',
    'force', 'payload', 'network', 'deviceType', 'device', 'user', 'command', 'notification', 'type', 'value', 'login', 'password', 'token']
  for (const action of [...Object.keys(ACTIONS), 'authenticate']) {
    for (const value of hostile) {
      const frame: Frame = { action }
      for (const field of fields) frame[field] = value
      if (action === 'device/save' || action === 'device/delete' || action === 'user/delete' || action === 'network/delete') frame.deviceId = 'hostile-dev'
      const reply = await ws.request(frame)
      if (reply.status === 'error') t.ok(reply.code >= 400 && reply.code < 500, `${action} ${JSON.stringify(value)?.slice(0, 20)}: ${reply.code} ${reply.error}`)
    }
  }
  t.equal((await ws.request({ action: 'server/info' })).status, 'success', 'the session survives')
})
