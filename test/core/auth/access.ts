import t from 'tap'
import { checkDeviceTarget, listedTargetsRefused, requireDeviceTypeTarget, requireNetworkTarget } from '../../../lib/core/auth/access.js'
import { createPluginPrincipal, createUserPrincipal, systemPrincipal } from '../../../lib/core/auth/principal.js'
import type { Principal } from '../../../lib/core/auth/principal.js'
import { Action } from '../../../lib/core/auth/actions.js'
import { loadDeviceInScope, loadDeviceOrNotFound } from '../../../lib/core/devices/device-access.js'
import { DeviceHubError } from '../../../lib/core/errors.js'
import { openTestStore } from '../../fixtures/store.js'
import type { UserRecord } from '../../../lib/core/users/user-ports.js'

const user = (fields: Partial<UserRecord> = {}): UserRecord => ({
  id: 5, login: 'someone', passwordHash: 'x', role: 1, status: 0, loginAttempts: 0, lastLogin: null, data: null, introReviewed: false, allDeviceTypesAvailable: false, tokenVersion: 0, ...fields
})
const token = (fields: object = {}) => ({ u: 5, a: [0], n: ['*'], dt: ['*'], e: 1, t: 1 as const, ...fields })
const assigned = { networkIds: [1, 2], deviceTypeIds: [1] }

function outcome (fn: () => unknown): string {
  try {
    fn()
    return 'pass'
  } catch (error) {
    if (!(error instanceof DeviceHubError)) throw error
    return `${error.code} ${error.message}`
  }
}

const admin = createUserPrincipal(user({ role: 0, allDeviceTypesAvailable: true }), token(), { networkIds: [], deviceTypeIds: [] })
const narrowAdmin = createUserPrincipal(user({ role: 0, allDeviceTypesAvailable: true }), token({ n: ['2'] }), { networkIds: [], deviceTypeIds: [] })
const client = createUserPrincipal(user(), token({ n: ['1'], dt: ['1'] }), assigned)
const starClient = createUserPrincipal(user(), token(), assigned)
const flagClient = createUserPrincipal(user({ allDeviceTypesAvailable: true }), token({ n: ['1'], dt: ['7'] }), assigned)
const DENIED = 'FORBIDDEN Access is denied'

t.test('network and device-type targets look at the token only (§4.2 steps 3-4)', async (t) => {
  const cases: Array<[string, Principal, number, string]> = [
    ['admin, any id', admin, 999, 'pass'],
    ['narrowed admin, granted', narrowAdmin, 2, 'pass'],
    ['narrowed admin, other id', narrowAdmin, 1, DENIED],
    ['client, granted', client, 1, 'pass'],
    ['client, assigned but not granted', client, 2, DENIED],
    ['client, missing id', client, 999, DENIED],
    ['client with n *, unassigned id passes to the 404 of the handler', starClient, 999, 'pass'],
    ['system', systemPrincipal, 3, 'pass']
  ]
  for (const [name, principal, id, expected] of cases) t.equal(outcome(() => requireNetworkTarget(principal, id)), expected, name)
  t.equal(outcome(() => requireDeviceTypeTarget(client, 2)), DENIED)
  t.equal(outcome(() => requireDeviceTypeTarget(client, 1)), 'pass')
  t.equal(outcome(() => requireDeviceTypeTarget(flagClient, 2)), 'pass', 'allDeviceTypesAvailable overrides dt (§4.1)')
})

t.test('device target: restricted 403 whether or not it exists, full scope 404 (§4.2 step 5-6)', async (t) => {
  const inScope = { networkId: 1, deviceTypeId: 1 }
  const otherNetwork = { networkId: 2, deviceTypeId: 1 }
  const unassigned = { networkId: 3, deviceTypeId: 1 }
  const notFound = 'NOT_FOUND Device with such deviceId = d not found'
  const cases: Array<[string, Principal, { networkId: number, deviceTypeId: number } | undefined, string]> = [
    ['admin, missing', admin, undefined, notFound],
    ['admin, present', admin, unassigned, 'pass'],
    ['narrowed admin, missing', narrowAdmin, undefined, DENIED],
    ['narrowed admin, outside its token', narrowAdmin, inScope, DENIED],
    ['narrowed admin, inside', narrowAdmin, otherNetwork, 'pass'],
    ['client, in scope', client, inScope, 'pass'],
    ['client, outside', client, otherNetwork, DENIED],
    ['client, missing', client, undefined, DENIED],
    ['full-scope client, unassigned network', starClient, unassigned, notFound],
    ['full-scope client, missing', starClient, undefined, notFound],
    ['full-scope client, assigned', starClient, otherNetwork, 'pass']
  ]
  for (const [name, principal, device, expected] of cases) t.equal(outcome(() => checkDeviceTarget(principal, 'd', device)), expected, name)

  const plugin = createPluginPrincipal({ id: 1, name: 'p', description: null, topicName: 'plugin_topic_x', filter: '*/*/*/*/*', status: 0, subscriptionId: null, userId: 1, parameters: null, grants: { networkIds: 'all', deviceTypeIds: 'all' } } as never,
    user({ role: 0 }), { tpc: 'plugin_topic_x', a: [0], e: 1, t: 1 } as never, { networkIds: [], deviceTypeIds: [] })
  t.equal(outcome(() => checkDeviceTarget(plugin, 'd', inScope)), DENIED, 'a plugin never names a device (§4.2 step 5)')
})

t.test('listed targets are refused by role', async (t) => {
  t.equal(outcome(() => { throw listedTargetsRefused(narrowAdmin, 'Networks with such networkIds wasn\'t found: {[3]}') }), 'NOT_FOUND Networks with such networkIds wasn\'t found: {[3]}')
  t.equal(outcome(() => { throw listedTargetsRefused(starClient, 'x') }), DENIED)
})

t.test('loading a device: the shared check, and the 404-for-everyone read of §4.4', async (t) => {
  const store = await openTestStore(t)
  const network = await store.networks.insert({ name: 'N', description: null })
  const type = await store.deviceTypes.insert({ name: 'T', description: null })
  await store.devices.insert({ id: 'far', name: 'far', data: null, networkId: network, deviceTypeId: type, isBlocked: false })
  const restricted = createUserPrincipal(user(), token({ n: ['999'], dt: ['*'] }), { networkIds: [999], deviceTypeIds: [] })
  const attempt = async (fn: () => Promise<unknown>): Promise<string> => {
    try {
      await fn()
      return 'pass'
    } catch (error) {
      return error instanceof DeviceHubError ? `${error.code}` : String(error)
    }
  }
  t.equal(await attempt(() => loadDeviceInScope(store, restricted, Action.GetDevice, 'far')), 'FORBIDDEN')
  t.equal(await attempt(() => loadDeviceInScope(store, restricted, Action.GetDevice, 'nope')), 'FORBIDDEN')
  t.equal(await attempt(() => loadDeviceInScope(store, admin, Action.GetDevice, 'nope')), 'NOT_FOUND')
  t.equal(await attempt(() => loadDeviceInScope(store, admin, Action.GetDevice, 'far')), 'pass')
  t.equal(await attempt(() => loadDeviceOrNotFound(store, restricted, Action.GetDeviceNotification, 'far')), 'NOT_FOUND')
  t.equal(await attempt(() => loadDeviceOrNotFound(store, restricted, Action.GetDeviceNotification, 'nope')), 'NOT_FOUND')
  t.equal(await attempt(() => loadDeviceOrNotFound(store, admin, Action.GetDeviceNotification, 'far')), 'pass')
  t.equal(await attempt(() => loadDeviceOrNotFound(store, createUserPrincipal(user(), token({ a: [] }), assigned), Action.ManageUser, 'far')), 'FORBIDDEN', 'the action first')
})
