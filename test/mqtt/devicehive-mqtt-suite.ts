/**
 * devicehive-mqtt's own integration suite (test/integration/broker.spec.js and api/*.js of
 * github.com/devicehive/devicehive-mqtt), ported case by case: one tap test per upstream `it`,
 * asserting what upstream asserts, against devicehub's MQTT port (issue #25). Upstream's `xit`
 * cases are here as skipped tests. Real server, real `mqtt` clients, real sockets.
 */
import { EventEmitter } from 'node:events'
import t from 'tap'
import type { Test } from 'tap'
import type { MqttClient } from 'mqtt'
import type { ApiClient, SuiteConfig } from '../fixtures/devicehive-mqtt.js'
import {
  DH_REQUEST_TOPIC, DH_RESPONSE_TOPIC, ERROR_STATUS, SUCCESS_STATUS,
  ask, connect, connectApi, connected, end, randomString, sleep, startSuiteServer, subscribe
} from '../fixtures/devicehive-mqtt.js'
import { subscribeGranted } from '../fixtures/mqtt.js'

/** `it('should connect to MQTT broker')` and one `it('should subscribe for "<topic>" topic')` per response topic. */
async function connectAndSubscribe (t: Test, config: SuiteConfig, actions: string[]): Promise<ApiClient> {
  let api: ApiClient | undefined
  await t.test('should connect to MQTT broker', async () => {
    api = await connectApi(t, config)
  })
  if (api === undefined) throw new Error('not connected')
  const { client } = api
  for (const action of actions) {
    const topic = `${DH_RESPONSE_TOPIC}/${action}`
    await t.test(`should subscribe for "${topic}" topic`, async (t) => {
      await subscribe(client, `${topic}@${client.options.clientId}`)
      t.pass('subscribed')
    })
  }
  return api
}

async function disconnect (t: Test, client: MqttClient): Promise<void> {
  await t.test('should disconnect from MQTT broker', async (t) => {
    await end(client)
    t.pass('disconnected')
  })
}

async function userApi (t: Test, config: SuiteConfig): Promise<void> {
  const A = { get: 'user/get', list: 'user/list', insert: 'user/insert', update: 'user/update', delete: 'user/delete', getCurrent: 'user/getCurrent', updateCurrent: 'user/updateCurrent', getNetwork: 'user/getNetwork', assignNetwork: 'user/assignNetwork', unassignNetwork: 'user/unassignNetwork' }
  const api = await connectAndSubscribe(t, config, Object.values(A))
  const TEST_USER_LOGIN = randomString()
  const START_USER_DATA = { data: 'startData' }
  const UPDATED_USER_DATA = { data: 'updatedData' }
  let testUserId: number | undefined

  await t.test(`should create new user with login: "${TEST_USER_LOGIN}"`, async (t) => {
    const message = await ask(api, { action: A.insert, user: { login: TEST_USER_LOGIN, role: 1, status: 0, password: 'qwertyui', data: START_USER_DATA, introReviewed: true } })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.user?.id, 'number')
    testUserId = message.user?.id
  })
  await t.test(`should query the list of users with existing user with login: "${TEST_USER_LOGIN}"`, async (t) => {
    const message = await ask(api, { action: A.list, take: 10 })
    t.equal(message.status, SUCCESS_STATUS)
    t.ok(message.users.map((u: { login: string }) => u.login).includes(TEST_USER_LOGIN))
  })
  await t.test(`should query the users with login: "${TEST_USER_LOGIN}"`, async (t) => {
    const message = await ask(api, { action: A.get, userId: testUserId })
    t.equal(message.status, SUCCESS_STATUS)
    t.equal(message.user.id, testUserId)
    t.equal(message.user.login, TEST_USER_LOGIN)
    t.same(message.user.data, START_USER_DATA)
  })
  await t.test('should update the users data', async (t) => {
    const message = await ask(api, { action: A.update, userId: testUserId, user: { data: UPDATED_USER_DATA } })
    t.equal(message.status, SUCCESS_STATUS)
  })
  await t.test('should query the users with updated data', async (t) => {
    const message = await ask(api, { action: A.get, userId: testUserId })
    t.equal(message.status, SUCCESS_STATUS)
    t.equal(message.user.id, testUserId)
    t.equal(message.user.login, TEST_USER_LOGIN)
    t.same(message.user.data, UPDATED_USER_DATA)
  })
  await t.test(`should assign the user to network with id "${config.NETWORK_ID}"`, async (t) => {
    const message = await ask(api, { action: A.assignNetwork, userId: testUserId, networkId: config.NETWORK_ID })
    t.equal(message.status, SUCCESS_STATUS)
  })
  await t.test(`should query the network of the user where the network id is: "${config.NETWORK_ID}"`, async (t) => {
    const message = await ask(api, { action: A.getNetwork, userId: testUserId, networkId: config.NETWORK_ID })
    t.equal(message.status, SUCCESS_STATUS)
    t.equal(message.network?.network?.id, config.NETWORK_ID)
  })
  await t.test(`should unassign the user from network with id "${config.NETWORK_ID}"`, async (t) => {
    const message = await ask(api, { action: A.unassignNetwork, userId: testUserId, networkId: config.NETWORK_ID })
    t.equal(message.status, SUCCESS_STATUS)
  })
  await t.test(`should check that the user is unassigned from the network with id: "${config.NETWORK_ID}"`, async (t) => {
    const message = await ask(api, { action: A.getNetwork, userId: testUserId, networkId: config.NETWORK_ID })
    t.equal(message.status, ERROR_STATUS)
  })
  await t.test(`should delete user with login: "${TEST_USER_LOGIN}"`, async (t) => {
    const message = await ask(api, { action: A.delete, userId: testUserId })
    t.equal(message.status, SUCCESS_STATUS)
  })
  await t.test(`should query the list of users without user with login: "${TEST_USER_LOGIN}"`, async (t) => {
    const message = await ask(api, { action: A.list, take: 10 })
    t.equal(message.status, SUCCESS_STATUS)
    t.notOk(message.users.map((u: { login: string }) => u.login).includes(TEST_USER_LOGIN))
  })
  await t.test(`should query the current user with login: "${config.TEST_LOGIN}"`, async (t) => {
    const message = await ask(api, { action: A.getCurrent })
    t.equal(message.status, SUCCESS_STATUS)
    t.equal(message.current.login, config.TEST_LOGIN)
  })
  await t.test(`should update the current user data to: "${JSON.stringify(UPDATED_USER_DATA)}"`, async (t) => {
    const message = await ask(api, { action: A.updateCurrent, user: { data: UPDATED_USER_DATA } })
    t.equal(message.status, SUCCESS_STATUS)
  })
  await t.test('should query the updated current user with updated data', async (t) => {
    const message = await ask(api, { action: A.getCurrent })
    t.equal(message.status, SUCCESS_STATUS)
    t.equal(message.current.login, config.TEST_LOGIN)
    t.same(message.current.data, UPDATED_USER_DATA)
  })
  await disconnect(t, api.client)
}

async function configurationApi (t: Test, config: SuiteConfig): Promise<void> {
  const A = { get: 'configuration/get', put: 'configuration/put', delete: 'configuration/delete' }
  const api = await connectAndSubscribe(t, config, Object.values(A))
  const name = randomString()
  const startValue = randomString()
  const updatedValue = randomString()
  const expectConfiguration = (t: Test, message: any, value: string): void => { // eslint-disable-line @typescript-eslint/no-explicit-any
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.configuration, 'object')
    t.equal(message.configuration?.name, name)
    t.equal(message.configuration?.value, value)
  }

  await t.test(`should put new configuration with name: "${name}" and value: "${startValue}"`, async (t) => {
    expectConfiguration(t, await ask(api, { action: A.put, name, value: startValue }), startValue)
  })
  await t.test(`should query configuration with name: "${name}"`, async (t) => {
    expectConfiguration(t, await ask(api, { action: A.get, name }), startValue)
  })
  await t.test(`should update configuration with name: "${name}" by new value: "${updatedValue}"`, async (t) => {
    expectConfiguration(t, await ask(api, { action: A.put, name, value: updatedValue }), updatedValue)
  })
  await t.test(`should query updated configuration with name: "${name}" and value: "${updatedValue}"`, async (t) => {
    expectConfiguration(t, await ask(api, { action: A.get, name }), updatedValue)
  })
  await t.test(`should delete configuration with name: "${name}"`, async (t) => {
    t.equal((await ask(api, { action: A.delete, name })).status, SUCCESS_STATUS)
  })
  await t.test(`should check that configuration with name: "${name}" has been deleted`, async (t) => {
    // Upstream sends no name here.
    t.equal((await ask(api, { action: A.get })).status, ERROR_STATUS)
  })
  await disconnect(t, api.client)
}

async function deviceApi (t: Test, config: SuiteConfig): Promise<void> {
  const A = { get: 'device/get', list: 'device/list', save: 'device/save', delete: 'device/delete' }
  const api = await connectAndSubscribe(t, config, Object.values(A))
  const [id1, id2, name1, name2, name1Updated] = [randomString(), randomString(), randomString(), randomString(), randomString()]
  const save = async (t: Test, deviceId: string, name: string): Promise<void> => {
    const message = await ask(api, { action: A.save, deviceId, device: { name, data: {}, networkId: config.NETWORK_ID } })
    t.equal(message.status, SUCCESS_STATUS)
  }
  const expectDevice = async (t: Test, deviceId: string, name: string): Promise<void> => {
    const message = await ask(api, { action: A.get, deviceId })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.device, 'object')
    t.equal(message.device?.id, deviceId)
    t.equal(message.device?.name, name)
  }
  const listed = async (t: Test): Promise<{ ids: string[], names: string[] }> => {
    const message = await ask(api, { action: A.list, networkId: config.NETWORK_ID })
    t.equal(message.status, SUCCESS_STATUS)
    return { ids: message.devices.map((d: { id: string }) => d.id), names: message.devices.map((d: { name: string }) => d.name) }
  }

  await t.test(`should create new device (1) with ID: "${id1}" and name: "${name1}"`, (t) => save(t, id1, name1))
  await t.test(`should create new device (2) with ID: "${id2}" and name: "${name2}"`, (t) => save(t, id2, name2))
  await t.test(`should query the device (1) with ID: "${id1}" and name: "${name1}"`, (t) => expectDevice(t, id1, name1))
  await t.test(`should query the device (2) with ID: "${id2}" and name: "${name2}"`, (t) => expectDevice(t, id2, name2))
  await t.test('should query the list of devices with existing device (1) and device (2)', async (t) => {
    const { ids, names } = await listed(t)
    t.ok(ids.includes(id1) && ids.includes(id2), 'both ids listed')
    t.ok(names.includes(name1) && names.includes(name2), 'both names listed')
  })
  await t.test(`should update the device (1) name: "${name1}" to "${name1Updated}"`, (t) => save(t, id1, name1Updated))
  await t.test(`should query the updated device (1) with updated name: "${name1Updated}"`, (t) => expectDevice(t, id1, name1Updated))
  for (const [n, id] of [[1, id1], [2, id2]] as const) {
    await t.test(`should delete device (${n}) with ID: "${id}"`, async (t) => {
      t.equal((await ask(api, { action: A.delete, deviceId: id })).status, SUCCESS_STATUS)
    })
  }
  await t.test('should query the list of devices without device (1) and device (2)', async (t) => {
    const { ids } = await listed(t)
    // chai's `not.include.members([a, b])`: not both of them.
    t.notOk(ids.includes(id1) && ids.includes(id2))
  })
  await disconnect(t, api.client)
}

async function deviceTypeApi (t: Test, config: SuiteConfig): Promise<void> {
  const A = { list: 'devicetype/list', count: 'devicetype/count', get: 'devicetype/get', insert: 'devicetype/insert', update: 'devicetype/update', delete: 'devicetype/delete' }
  const api = await connectAndSubscribe(t, config, Object.values(A))
  const [name, description, newDescription] = [randomString(), randomString(), randomString()]
  let deviceTypeCount = 0
  let customDeviceTypeId: number | undefined

  await t.test('should get count of existing device types', async (t) => {
    const message = await ask(api, { action: A.count })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.count, 'number')
    deviceTypeCount = message.count
  })
  await t.test(`should create new device type with name: "${name}" and description: "${description}"`, async (t) => {
    const message = await ask(api, { action: A.insert, deviceType: { name, description } })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.deviceType?.id, 'number')
    customDeviceTypeId = message.deviceType?.id
  })
  await t.test('should get new count of existing device types increased by 1', async (t) => {
    const message = await ask(api, { action: A.count })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.count, 'number')
    t.equal(message.count, deviceTypeCount + 1)
  })
  await t.test(`should query the device type with name: "${name}" and description: "${description}"`, async (t) => {
    const message = await ask(api, { action: A.list, name })
    t.equal(message.status, SUCCESS_STATUS)
    t.ok(Array.isArray(message.deviceTypes))
    t.equal(message.deviceTypes[0]?.id, customDeviceTypeId)
    t.equal(message.deviceTypes[0]?.name, name)
    t.equal(message.deviceTypes[0]?.description, description)
  })
  await t.test(`should update device type with name: "${name}" to new description: "${newDescription}"`, async (t) => {
    const updated = await ask(api, { action: A.update, deviceTypeId: customDeviceTypeId, deviceType: { name, description: newDescription } })
    t.equal(updated.status, SUCCESS_STATUS)
    const message = await ask(api, { action: A.get, deviceTypeId: customDeviceTypeId })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.deviceType, 'object')
    t.equal(message.deviceType?.id, customDeviceTypeId)
    t.equal(message.deviceType?.name, name)
    t.equal(message.deviceType?.description, newDescription)
  })
  await t.test(`should delete the device type with name: "${name}" and description: "${newDescription}"`, async (t) => {
    // Upstream sends devicetype/get here, not devicetype/delete.
    t.equal((await ask(api, { action: A.get, deviceTypeId: customDeviceTypeId })).status, SUCCESS_STATUS)
  })
  await disconnect(t, api.client)
}

async function networkApi (t: Test, config: SuiteConfig): Promise<void> {
  const A = { get: 'network/get', list: 'network/list', insert: 'network/insert', update: 'network/update', delete: 'network/delete' }
  const api = await connectAndSubscribe(t, config, Object.values(A))
  const [name, description, updatedDescription] = [randomString(), randomString(), randomString()]
  let testNetworkId: number | undefined
  const expectNetwork = async (t: Test, expected: string): Promise<void> => {
    const message = await ask(api, { action: A.get, networkId: testNetworkId })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.network, 'object')
    t.equal(message.network?.id, testNetworkId)
    t.equal(message.network?.name, name)
    t.equal(message.network?.description, expected)
  }

  await t.test(`should create new network with name: "${name}" and description: "${description}"`, async (t) => {
    const message = await ask(api, { action: A.insert, network: { name, description } })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.network, 'object')
    testNetworkId = message.network?.id
  })
  await t.test(`should query the network name: "${name} and description: "${description}"`, (t) => expectNetwork(t, description))
  await t.test('should query the list of networks with existing network', async (t) => {
    const message = await ask(api, { action: A.list, take: 10 })
    t.equal(message.status, SUCCESS_STATUS)
    t.ok(Array.isArray(message.networks))
    t.ok(message.networks.map((n: { id: number }) => n.id).includes(testNetworkId))
    t.ok(message.networks.map((n: { name: string }) => n.name).includes(name))
    t.ok(message.networks.map((n: { description: string }) => n.description).includes(description))
  })
  await t.test(`should update the network description: "${description}" to "${updatedDescription}"`, async (t) => {
    const message = await ask(api, { action: A.update, networkId: testNetworkId, network: { description: updatedDescription } })
    t.equal(message.status, SUCCESS_STATUS)
  })
  await t.test(`should query the updated network where updated description is: "${updatedDescription}"`, (t) => expectNetwork(t, updatedDescription))
  await t.test('should delete the network"', async (t) => {
    t.equal((await ask(api, { action: A.delete, networkId: testNetworkId })).status, SUCCESS_STATUS)
  })
  await t.test('should query the list of the networks without deleted network', async (t) => {
    const message = await ask(api, { action: A.list, networkId: config.NETWORK_ID })
    t.equal(message.status, SUCCESS_STATUS)
    t.ok(Array.isArray(message.networks))
    t.notOk(message.networks.map((n: { id: number }) => n.id).includes(testNetworkId))
  })
  await disconnect(t, api.client)
}

async function commandApi (t: Test, config: SuiteConfig): Promise<void> {
  const A = { get: 'command/get', list: 'command/list', insert: 'command/insert', update: 'command/update' }
  const api = await connectAndSubscribe(t, config, Object.values(A))
  const name = randomString()
  const startParameters = { parameter: 'startParameter' }
  const updatedParameters = { parameter: 'updatedParameter' }
  let testCommandId: number | undefined
  const expectCommand = async (t: Test, parameters: object): Promise<void> => {
    const message = await ask(api, { action: A.get, deviceId: config.DEVICE_ID, commandId: testCommandId })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.command, 'object')
    t.equal(message.command?.id, testCommandId)
    t.equal(message.command?.command, name)
    t.equal(message.command?.deviceId, config.DEVICE_ID)
    t.same(message.command?.parameters, parameters)
  }

  await t.test(`should create new command with name: "${name}" for device with id: "${config.DEVICE_ID}"`, async (t) => {
    const message = await ask(api, { action: A.insert, deviceId: config.DEVICE_ID, command: { command: name, parameters: startParameters, lifetime: 20 } })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.command, 'object')
    testCommandId = message.command?.id
  })
  await t.test(`should query the command with name: "${name}" and parameters: "${JSON.stringify(startParameters)}"`, (t) => expectCommand(t, startParameters))
  await t.test(`should query the list of command for device with id: "${config.DEVICE_ID}" with existing command with name: "${name}"`, async (t) => {
    const message = await ask(api, { action: A.list, deviceId: config.DEVICE_ID, take: 1000 })
    t.equal(message.status, SUCCESS_STATUS)
    t.ok(Array.isArray(message.commands))
    t.ok(message.commands.map((c: { id: number }) => c.id).includes(testCommandId))
    t.ok(message.commands.map((c: { command: string }) => c.command).includes(name))
  })
  await t.test(`should update the command parameters to "${JSON.stringify(updatedParameters)}"`, async (t) => {
    const message = await ask(api, { action: A.update, deviceId: config.DEVICE_ID, commandId: testCommandId, command: { parameters: updatedParameters } })
    t.equal(message.status, SUCCESS_STATUS)
  })
  await t.test(`should query the updated command where updated parameters are: "${JSON.stringify(updatedParameters)}"`, (t) => expectCommand(t, updatedParameters))
  await disconnect(t, api.client)
}

async function notificationApi (t: Test, config: SuiteConfig): Promise<void> {
  const A = { get: 'notification/get', list: 'notification/list', insert: 'notification/insert' }
  const api = await connectAndSubscribe(t, config, Object.values(A))
  const name = randomString()
  const parameters = { parameter: 'startParameter' }
  let testNotificationId: number | undefined

  await t.test(`should create new notification with name: "${name}" for device with id: "${config.DEVICE_ID}"`, async (t) => {
    const message = await ask(api, { action: A.insert, deviceId: config.DEVICE_ID, notification: { notification: name, parameters } })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.notification, 'object')
    testNotificationId = message.notification?.id
  })
  await t.test(`should query the notification with name: "${name}"`, async (t) => {
    const message = await ask(api, { action: A.get, deviceId: config.DEVICE_ID, notificationId: testNotificationId })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.notification, 'object')
    t.equal(message.notification?.id, testNotificationId)
    t.equal(message.notification?.notification, name)
    t.equal(message.notification?.deviceId, config.DEVICE_ID)
    t.same(message.notification?.parameters, parameters)
  })
  await t.test(`should query the list of notifications for device with id: "${config.DEVICE_ID}" with existing notification with name: "${name}"`, async (t) => {
    const message = await ask(api, { action: A.list, deviceId: config.DEVICE_ID, take: 1000 })
    t.equal(message.status, SUCCESS_STATUS)
    t.ok(Array.isArray(message.notifications))
    t.ok(message.notifications.map((n: { id: number }) => n.id).includes(testNotificationId))
    t.ok(message.notifications.map((n: { notification: string }) => n.notification).includes(name))
  })
  await disconnect(t, api.client)
}

async function subscriptionApi (t: Test, config: SuiteConfig): Promise<void> {
  const api = await connectAndSubscribe(t, config, ['subscription/list'])
  const { client } = api
  const topics = ['command', 'notification'].flatMap((type) => [1, 2].map((n) => `dh/${type}/${config.NETWORK_ID}/${config.DEVICE_TYPE_ID}/${config.DEVICE_ID}/testName${n}`))
  for (const topic of topics) {
    await t.test(`should subscribe for "${topic}" topic`, async (t) => {
      await subscribe(client, `${topic}@${client.options.clientId}`)
      t.pass('subscribed')
    })
  }
  // Upstream's two subscription/list cases are `xit` (pending): so are they here.
  for (const type of ['command', 'notification']) {
    await t.test(`should query the list of ${type} subscriptions for the user login: "${config.TEST_LOGIN}"`, { todo: 'xit upstream' }, async (t) => {
      const message = await ask(api, { action: 'subscription/list', type })
      t.equal(message.status, SUCCESS_STATUS)
    })
  }
  await disconnect(t, client)
}

async function tokenApi (t: Test, config: SuiteConfig): Promise<void> {
  const api = await connectAndSubscribe(t, config, ['token', 'token/create', 'token/refresh'])
  let refreshToken: string | undefined
  const expectTokens = (t: Test, message: any): void => { // eslint-disable-line @typescript-eslint/no-explicit-any
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.accessToken, 'string')
    t.type(message.refreshToken, 'string')
    refreshToken = message.refreshToken
  }

  await t.test(`should create access and refresh tokens by login: "${config.TEST_LOGIN}" and password`, async (t) => {
    expectTokens(t, await ask(api, { action: 'token', login: config.TEST_LOGIN, password: config.TEST_PASSWORD }))
  })
  await t.test('should create access and refresh tokens by payload', async (t) => {
    const payload = { userId: config.TEST_USER_ID, networkIds: [config.NETWORK_ID], deviceTypeIds: [config.DEVICE_TYPE_ID] }
    expectTokens(t, await ask(api, { action: 'token/create', payload }))
  })
  await t.test('should refresh access token by refresh token.', async (t) => {
    const message = await ask(api, { action: 'token/refresh', refreshToken })
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.accessToken, 'string')
  })
  await disconnect(t, api.client)
}

async function authenticationApi (t: Test, config: SuiteConfig): Promise<void> {
  const api = await connectAndSubscribe(t, config, ['authenticate', 'token'])
  await t.test('should authenticate by access token received from server', async (t) => {
    // As upstream: the token request's reply is checked; the authenticate it sends is not awaited.
    const message = await ask(api, { action: 'token', login: config.TEST_LOGIN, password: config.TEST_PASSWORD })
    t.equal(message.status, SUCCESS_STATUS)
    const authenticated = await ask(api, { action: 'authenticate', token: message.accessToken })
    t.equal(authenticated.status, SUCCESS_STATUS)
  })
  await disconnect(t, api.client)
}

async function infoApi (t: Test, config: SuiteConfig, action: string, key: string): Promise<void> {
  const api = await connectAndSubscribe(t, config, [action])
  await t.test(`should get ${action.split('/')[0]} information`, async (t) => {
    const message = await ask(api, { action })
    t.equal(message.status, SUCCESS_STATUS)
    t.ok(key in message, `the reply has ${key}`)
  })
  await disconnect(t, api.client)
}

/** broker.spec.js, "Connection without credentials. Postponed authentication". */
async function postponedAuthentication (t: Test, config: SuiteConfig): Promise<void> {
  const ee = new EventEmitter()
  let client: MqttClient | undefined
  let accessToken: string | undefined
  /** `ee.once(action, (message) => { if (message.requestId === requestId) ... })`. */
  const replyOn = (action: string, requestId: string): Promise<any> => new Promise((resolve, reject) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const timer = setTimeout(() => reject(new Error(`no ${action} reply`)), 10_000)
    ee.on(action, function onMessage (message: { requestId?: string }) {
      if (message.requestId !== requestId) return
      clearTimeout(timer)
      ee.off(action, onMessage)
      resolve(message)
    })
  })

  await t.test('should connect to MQTT broker without user credentials', async (st) => {
    client = connect(t, config.MQTT_BROKER_URL)
    client.on('message', (topic, message) => ee.emit(topic.split('/')[2]!.split('@')[0]!, JSON.parse(message.toString())))
    await connected(client)
    st.pass('connected')
  })
  if (client === undefined) return
  const mqttClient = client
  await t.test('should not be able to subscribe for DH topic (except token and authenticate)', async (t) => {
    t.same(await subscribeGranted(mqttClient, ['dh/notification/#']), [128])
  })
  for (const action of ['token', 'authenticate']) {
    await t.test(`should be able to subscribe for DH ${action} response topic`, async (t) => {
      await subscribe(mqttClient, `dh/response/${action}@${mqttClient.options.clientId}`)
      t.pass('subscribed')
    })
  }
  await t.test('should create access and refresh token by user credentials', async (t) => {
    const requestId = randomString()
    const reply = replyOn('token', requestId)
    mqttClient.publish(DH_REQUEST_TOPIC, JSON.stringify({ action: 'token', requestId, login: config.TEST_LOGIN, password: config.TEST_PASSWORD }))
    const message = await reply
    t.equal(message.status, SUCCESS_STATUS)
    t.type(message.accessToken, 'string')
    t.type(message.refreshToken, 'string')
    accessToken = message.accessToken
  })
  await t.test('should authenticate user by access token', async (t) => {
    const requestId = randomString()
    const reply = replyOn('authenticate', requestId)
    mqttClient.publish(DH_REQUEST_TOPIC, JSON.stringify({ action: 'authenticate', requestId, token: accessToken }))
    t.equal((await reply).status, SUCCESS_STATUS)
  })
  await t.test('should be able to subscribe for any DH topic after success authentication', async (t) => {
    await subscribe(mqttClient, 'dh/notification/#')
    t.pass('subscribed')
  })
  await disconnect(t, mqttClient)
}

/** broker.spec.js, "Basic functionality": each case with a client of its own (`beforeEach`), ended after it (`afterEach`). */
async function basicCase (t: Test, config: SuiteConfig, name: string, body: (t: Test, client: MqttClient, clientId: string) => Promise<void>): Promise<void> {
  await t.test(name, async (t) => {
    const mqttClientId = randomString()
    const mqttClient = connect(t, config.MQTT_BROKER_URL, { clientId: mqttClientId, username: config.TEST_LOGIN, password: config.TEST_PASSWORD })
    mqttClient.on('error', (err) => t.fail(`error: ${err.message}`))
    try {
      await body(t, mqttClient, mqttClientId)
    } finally {
      mqttClient.end()
    }
  })
}

/** The next message of `client` as (topic, parsed payload). */
function nextOf (client: MqttClient, timeoutMs = 10_000): Promise<{ topic: string, message: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no message')), timeoutMs)
    client.once('message', (topic, message) => {
      clearTimeout(timer)
      resolve({ topic, message: JSON.parse(message.toString()) })
    })
  })
}

function eventRequest (config: SuiteConfig, action: string, field: 'notification' | 'command', body: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ action, deviceId: config.DEVICE_ID, networkId: config.NETWORK_ID, deviceTypeId: config.DEVICE_TYPE_ID, ...extra, [field]: body })
}

async function basicFunctionality (t: Test, config: SuiteConfig): Promise<void> {
  const path = `${config.NETWORK_ID}/${config.DEVICE_TYPE_ID}/${config.DEVICE_ID}`
  await basicCase(t, config, `should connect to MQTT broker on "${config.MQTT_BROKER_URL}" as user: "${config.TEST_LOGIN}"`, async (t, client) => {
    await connected(client)
    t.pass('connected')
  })
  await basicCase(t, config, 'should receive access and refresh tokens', async (t, client, clientId) => {
    const responseTopic = `dh/response/token@${clientId}`
    const requestId = randomString()
    await connected(client)
    await subscribe(client, responseTopic)
    const next = nextOf(client)
    client.publish(DH_REQUEST_TOPIC, JSON.stringify({ action: 'token', requestId, login: config.TEST_LOGIN, password: config.TEST_PASSWORD }))
    const { topic, message } = await next
    t.equal(topic, responseTopic)
    t.equal(message.status, SUCCESS_STATUS)
    t.equal(message.requestId, requestId)
    t.type(message.accessToken, 'string')
    t.type(message.refreshToken, 'string')
  })
  await basicCase(t, config, 'should subscribe for notification/insert event and publish new notification', async (t, client) => {
    const name = randomString()
    const subscriptionTopic = `dh/notification/${path}/${name}`
    await connected(client)
    await subscribe(client, subscriptionTopic)
    const next = nextOf(client)
    client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'notification/insert', 'notification', { timestamp: new Date(), notification: name, parameters: { temperature: 999 } }))
    const { topic, message } = await next
    t.equal(topic, subscriptionTopic)
    t.equal(message.action, 'notification/insert')
    t.equal(message.notification?.notification, name)
  })
  await basicCase(t, config, 'should subscribe for command/insert event and publish new command', async (t, client) => {
    const name = randomString()
    const subscriptionTopic = `dh/command/${path}/${name}`
    await connected(client)
    await subscribe(client, subscriptionTopic)
    const next = nextOf(client)
    client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'command/insert', 'command', { timestamp: new Date(), command: name, lifetime: 15, parameters: { value: 1 } }))
    const { topic, message } = await next
    t.equal(topic, subscriptionTopic)
    t.equal(message.action, 'command/insert')
    t.equal(message.command?.command, name)
  })
  await basicCase(t, config, 'should subscribe for command/update event, create and update command', async (t, client) => {
    const name = randomString()
    const topic1 = `dh/command_update/${path}/${name}`
    const topic2 = `dh/command/${path}/${name}`
    await connected(client)
    const updated = new Promise<any>((resolve, reject) => { // eslint-disable-line @typescript-eslint/no-explicit-any
      const timer = setTimeout(() => reject(new Error('no command/update push')), 10_000)
      client.on('message', (topic, buffer) => {
        const message = JSON.parse(buffer.toString())
        if (topic === topic2) {
          t.equal(message.command?.parameters?.value, 1)
          client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'command/update', 'command', { command: name, parameters: { value: 432 } }, { commandId: message.command?.id }))
        } else if (topic === topic1) {
          clearTimeout(timer)
          resolve(message)
        }
      })
    })
    client.subscribe(topic1)
    await subscribe(client, topic2)
    client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'command/insert', 'command', { timestamp: new Date(), command: name, lifetime: 15, parameters: { value: 1 } }))
    const message = await updated
    t.equal(message.action, 'command/update')
    // What the older upstream version asserted too.
    t.equal(message.command?.parameters?.value, 432)
    t.equal(message.command?.command, name)
  })
  await unsubscribeCase(t, config, path)
  await sharedCase(t, config, path)
}

async function unsubscribeCase (t: Test, config: SuiteConfig, path: string): Promise<void> {
  await basicCase(t, config, 'should be able to unsubscribe from previous subscriptions', async (t, client) => {
    const topic1 = `dh/notification/${path}/light`
    const topic2 = `dh/command/${path}/switchOff`
    let spy1 = 0
    let spy2 = 0
    client.on('message', (topic) => {
      if (topic === topic1) {
        spy1++
        client.unsubscribe(topic1, () => {
          client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'notification/insert', 'notification', { timestamp: new Date(), notification: 'light', parameters: { status: 'off' } }))
        })
      } else if (topic === topic2) {
        spy2++
        client.unsubscribe(topic2, () => {
          client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'command/insert', 'command', { timestamp: new Date(), command: 'switchOn', lifetime: 60, parameters: { value: 'on' } }))
        })
      }
    })
    await connected(client)
    client.subscribe(topic1, () => {
      client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'notification/insert', 'notification', { timestamp: new Date(), notification: 'light', parameters: { status: 'on' } }))
    })
    client.subscribe(topic2, () => {
      client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'command/insert', 'command', { timestamp: new Date(), command: 'switchOff', lifetime: 60, parameters: { value: 'off' } }))
    })
    await sleep(4500)
    t.equal(spy1, 1, 'the notification topic delivered once')
    t.equal(spy2, 1, 'the command topic delivered once')
  })
}

async function sharedCase (t: Test, config: SuiteConfig, path: string): Promise<void> {
  await basicCase(t, config, 'should send notification of same subscription for each subscriber only once', async (t, client) => {
    const SUBSCRIPTION_TOPIC = `dh/notification/${path}/sharedNotification`
    const login = { username: config.TEST_LOGIN, password: config.TEST_PASSWORD }
    const client2 = connect(t, config.MQTT_BROKER_URL, login)
    const client3 = connect(t, config.MQTT_BROKER_URL, login)
    let subscriptionCounter = 0
    const sharedPublisher = (): void => {
      subscriptionCounter++
      if (subscriptionCounter > 2) {
        client.publish(DH_REQUEST_TOPIC, eventRequest(config, 'notification/insert', 'notification', { timestamp: new Date(), notification: 'sharedNotification', parameters: { status: 'share' } }))
      }
    }
    const spies = [0, 0, 0]
    for (const [i, c] of [client, client2, client3].entries()) {
      c.on('connect', () => c.subscribe(SUBSCRIPTION_TOPIC, () => sharedPublisher()))
      c.on('message', (topic) => {
        if (topic !== SUBSCRIPTION_TOPIC) return
        spies[i]!++
        if (c === client3) client3.unsubscribe(SUBSCRIPTION_TOPIC, () => sharedPublisher())
      })
    }
    await sleep(4500)
    client2.end()
    client3.end()
    t.equal(spies[0], 2, 'client 1 got both notifications')
    t.equal(spies[1], 2, 'client 2 got both notifications')
    t.equal(spies[2], 1, 'client 3 got the first one only')
  })
}

t.test('MQTT broker (devicehive-mqtt integration suite)', async (t) => {
  const config = await startSuiteServer(t)
  await t.test('User API', (t) => userApi(t, config))
  await t.test('Configuration API', (t) => configurationApi(t, config))
  await t.test('Device API', (t) => deviceApi(t, config))
  await t.test('Device Type API', (t) => deviceTypeApi(t, config))
  await t.test('Network API', (t) => networkApi(t, config))
  await t.test('Command API', (t) => commandApi(t, config))
  await t.test('Notification API', (t) => notificationApi(t, config))
  await t.test('Subscription API', (t) => subscriptionApi(t, config))
  await t.test('Token API', (t) => tokenApi(t, config))
  await t.test('Authentication API', (t) => authenticationApi(t, config))
  await t.test('Server API', (t) => infoApi(t, config, 'server/info', 'info'))
  await t.test('Cluster API', (t) => infoApi(t, config, 'cluster/info', 'clusterInfo'))
  await t.test('Connection without credentials. Postponed authentication', (t) => postponedAuthentication(t, config))
  await t.test('Basic functionality', (t) => basicFunctionality(t, config))
})
