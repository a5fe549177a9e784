/**
 * `PUT /plugin` checks in DeviceHive's order (issue 23, point 8), over real sockets: the plugin
 * (404 / 403), then its parameters, then the rule that an ACTIVE plugin's filter changes only
 * with its status, and only then the new filter's targets (D7: 403 for a restricted caller,
 * 404 for a full-scope one).
 */
import t from 'tap'
import { createTestApp } from '../fixtures/app.js'
import type { TestApp } from '../fixtures/app.js'
import type { TestContext } from '../fixtures/store.js'

const ACTIVE_FILTER = "Plugin's subscription filter can't be updated if plugin is ACTIVE"
const DENIED = { error: 403, message: 'Access is denied' }

interface Answer { status: number, body: Record<string, unknown> | undefined }

async function listen (h: TestApp): Promise<(method: string, token: string, query: Record<string, string>, body?: unknown) => Promise<Answer>> {
  const address = await h.app.listen({ port: 0, host: '127.0.0.1' })
  return async (method, token, query, body) => {
    const res = await fetch(`${address}/api/rest/plugin?${new URLSearchParams(query).toString()}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
  }
}

async function setup (t: TestContext): Promise<{ h: TestApp, call: Awaited<ReturnType<typeof listen>>, net2: number, client: { accessToken: string } }> {
  const h = await createTestApp(t)
  const call = await listen(h)
  const net2 = await h.store.networks.insert({ name: 'Not the client\'s', description: null })
  await h.store.devices.insert({ id: 'elsewhere', name: 'elsewhere', data: null, networkId: net2, deviceTypeId: 1, isBlocked: false })
  const client = await h.createUser({ networkIds: [1], allDeviceTypesAvailable: false, deviceTypeIds: [1] })
  return { h, call, net2, client }
}

async function registerAs (call: Awaited<ReturnType<typeof listen>>, token: string, query: Record<string, string>): Promise<string> {
  const res = await call('POST', token, query, { name: 'ordered' })
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body?.topicName as string
}

async function viewOf (call: Awaited<ReturnType<typeof listen>>, token: string, topicName: string): Promise<Record<string, unknown>> {
  const res = await call('GET', token, { topicName })
  return (res.body as unknown as Array<Record<string, unknown>>)[0] ?? {}
}

/** Filter targets the client of `setup` may not see: another network's, or none at all. */
function hiddenFrom (net2: number): Array<Record<string, string>> {
  return [{ networkIds: String(net2) }, { networkIds: '999' }, { deviceTypeIds: '999' }, { deviceId: 'elsewhere' }, { deviceId: 'nowhere' }]
}

t.test('an ACTIVE plugin answers 400 before any check of the new targets', async (t) => {
  const { h, call, net2, client } = await setup(t)
  const owned = await registerAs(call, client.accessToken, { returnCommands: 'true', networkIds: '1' })
  t.equal((await call('PUT', client.accessToken, { topicName: owned, status: 'ACTIVE' })).status, 204)
  const adminOwned = await registerAs(call, h.adminToken, { returnNotifications: 'true' })
  t.equal((await call('PUT', h.adminToken, { topicName: adminOwned, status: 'ACTIVE' })).status, 204)

  // Targets the client may not see, or that do not exist: the rule for ACTIVE plugins answers first.
  for (const filter of hiddenFrom(net2)) {
    const res = await call('PUT', client.accessToken, { topicName: owned, ...filter })
    t.same([res.status, res.body], [400, { error: 400, message: ACTIVE_FILTER }], `client, ${JSON.stringify(filter)}`)
    const same = await call('PUT', client.accessToken, { topicName: owned, status: 'ACTIVE', ...filter })
    t.same([same.status, same.body], [400, { error: 400, message: ACTIVE_FILTER }], `client, ACTIVE again, ${JSON.stringify(filter)}`)
  }
  const absent: Array<Record<string, string>> = [{ networkIds: '999' }, { deviceTypeIds: '999' }, { deviceId: 'nowhere' }]
  for (const filter of absent) {
    const res = await call('PUT', h.adminToken, { topicName: adminOwned, ...filter })
    t.same([res.status, res.body], [400, { error: 400, message: ACTIVE_FILTER }], `admin, ${JSON.stringify(filter)}`)
  }
  // Nothing changed.
  t.same([(await viewOf(call, client.accessToken, owned)).filter, (await viewOf(call, client.accessToken, owned)).status], ['command/1/*/*/*', 'ACTIVE'])
  t.equal((await viewOf(call, h.adminToken, adminOwned)).filter, 'notification/*/*/*/*')

  // Deactivating in the same request lets the filter through to the target checks.
  const leaving = await call('PUT', client.accessToken, { topicName: owned, status: 'INACTIVE', networkIds: String(net2) })
  t.same([leaving.status, leaving.body], [403, DENIED], 'a change of status reaches the target check')
  t.equal((await viewOf(call, client.accessToken, owned)).status, 'ACTIVE', 'and the refused request changed nothing')
  const adminLeaving = await call('PUT', h.adminToken, { topicName: adminOwned, status: 'INACTIVE', networkIds: '999' })
  t.same([adminLeaving.status, adminLeaving.body], [404, { error: 404, message: 'Network with id = 999 not found' }])
})

t.test('an INACTIVE plugin checks the targets: 403 for a restricted caller, 404 for an administrator', async (t) => {
  const { h, call, net2, client } = await setup(t)
  const owned = await registerAs(call, client.accessToken, { returnCommands: 'true' })
  t.equal((await call('PUT', client.accessToken, { topicName: owned, status: 'INACTIVE' })).status, 204)
  for (const filter of hiddenFrom(net2)) {
    const res = await call('PUT', client.accessToken, { topicName: owned, ...filter })
    t.same([res.status, res.body], [403, DENIED], JSON.stringify(filter))
  }
  t.equal((await viewOf(call, client.accessToken, owned)).filter, 'command/*/*/*/*', 'refused filters are not stored')
  t.equal((await call('PUT', client.accessToken, { topicName: owned, networkIds: '1', deviceTypeIds: '1' })).status, 204, 'its own targets pass')

  // The administrator sees every network and device; only what does not exist is 404.
  const adminOwned = await registerAs(call, h.adminToken, { returnCommands: 'true' })
  const missing: Array<[Record<string, string>, string]> = [
    [{ networkIds: `1,999` }, 'Network with id = 999 not found'],
    [{ deviceTypeIds: '999' }, 'Device type with id = 999 not found'],
    [{ deviceId: 'nowhere' }, 'Device with such deviceId = nowhere not found']
  ]
  for (const [filter, message] of missing) {
    const res = await call('PUT', h.adminToken, { topicName: adminOwned, ...filter })
    t.same([res.status, res.body], [404, { error: 404, message }], JSON.stringify(filter))
  }
  t.equal((await call('PUT', h.adminToken, { topicName: adminOwned, networkIds: String(net2), deviceId: 'elsewhere' })).status, 204)
  t.equal((await viewOf(call, h.adminToken, adminOwned)).filter, `*/${net2}/*/elsewhere/*`)
})

t.test('the plugin is resolved before its parameters are read', async (t) => {
  const { h, call, client } = await setup(t)
  const other = await h.createUser({ networkIds: [1] })
  const theirs = await registerAs(call, other.accessToken, { returnCommands: 'true' })
  const gone = 'plugin_topic_00000000-0000-0000-0000-000000000000'
  const queries: Array<Record<string, string>> = [
    { status: 'CREATED' }, { status: 'RUNNING' }, { returnCommands: 'false', returnUpdatedCommands: 'false', returnNotifications: 'false' },
    { networkIds: 'x' }, { name: '' }, { parameters: '[1]' }, { networkIds: '999' }
  ]
  for (const query of queries) {
    const admin = await call('PUT', h.adminToken, { topicName: gone, ...query })
    t.same([admin.status, admin.body], [404, { error: 404, message: 'Plugin is not found' }], `admin, missing, ${JSON.stringify(query)}`)
    const notOwner = await call('PUT', client.accessToken, { topicName: theirs, ...query })
    t.same([notOwner.status, notOwner.body], [403, { error: 403, message: 'No access to plugin' }], `not the owner, ${JSON.stringify(query)}`)
  }
})
