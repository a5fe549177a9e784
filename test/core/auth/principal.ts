import t from 'tap'
import { createUserPrincipal, createPluginPrincipal, pluginScope } from '../../../lib/core/auth/principal.js'
import { requireAction, scopeAllowsDevice, scopeIsEmpty } from '../../../lib/core/auth/permissions.js'
import { Action, ALL_ACTIONS, CLIENT_ACTIONS, expandActions, parseAction } from '../../../lib/core/auth/actions.js'
import type { PluginRecord } from '../../../lib/core/plugins/plugin-ports.js'
import type { UserRecord } from '../../../lib/core/users/user-ports.js'

const user = (fields: Partial<UserRecord> = {}): UserRecord => ({
  id: 5, login: 'someone', passwordHash: 'x', role: 1, status: 0, loginAttempts: 0, lastLogin: null, data: null, introReviewed: false, allDeviceTypesAvailable: false, tokenVersion: 0, ...fields
})
const token = (fields: object = {}) => ({ u: 5, a: [0], n: ['*'], dt: ['*'], e: 1, t: 1 as const, ...fields })

t.test('actions table (§1.6)', async (t) => {
  t.equal(Action.ManagePlugin, 16)
  t.equal(Action.GetDeviceType, 17)
  t.equal(Action.ManageDeviceType, 18)
  t.same([...CLIENT_ACTIONS], [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16, 17])
  t.same([...ALL_ACTIONS], [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18])
  t.equal(parseAction('managedevicetype'), 18)
  t.equal(parseAction('*'), 0)
  t.equal(parseAction(1), 1)
  t.equal(parseAction('None'), undefined, 'NONE has no name')
  t.equal(parseAction('GetPlugin'), undefined)
  t.equal(parseAction(19), undefined)
  t.same([...expandActions([0])], [...ALL_ACTIONS])
  t.same([...expandActions([])], [...CLIENT_ACTIONS])
  t.same([...expandActions(null)], [])
  t.same([...expandActions([1])], [])
  t.same([...expandActions([1, 12])], [12])
})

t.test('scope of a user token (§4.1, §4.3)', async (t) => {
  const admin = createUserPrincipal(user({ role: 0, allDeviceTypesAvailable: true }), token(), { networkIds: [], deviceTypeIds: [] })
  t.same(admin.scope, { networkIds: 'all', deviceTypeIds: 'all' })
  t.equal(admin.fullScope, true)
  t.equal(admin.isAdmin, true)

  const narrowedAdmin = createUserPrincipal(user({ role: 0, allDeviceTypesAvailable: false }), token({ n: ['2'], dt: ['3'] }), { networkIds: [], deviceTypeIds: [] })
  t.same(narrowedAdmin.scope, { networkIds: [2], deviceTypeIds: [3] }, 'an admin is bounded by the token alone')
  t.equal(narrowedAdmin.fullScope, false)

  const flagOverride = createUserPrincipal(user({ role: 0, allDeviceTypesAvailable: true }), token({ dt: ['3'] }), { networkIds: [], deviceTypeIds: [] })
  t.equal(flagOverride.scope.deviceTypeIds, 'all', 'allDeviceTypesAvailable overrides dt')

  const client = createUserPrincipal(user(), token({ a: [], n: ['*'], dt: ['*'] }), { networkIds: [1, 2], deviceTypeIds: [4] })
  t.same(client.scope, { networkIds: [1, 2], deviceTypeIds: [4] }, 'a client is bounded by its assignments')
  t.same([...client.actions], [...CLIENT_ACTIONS])

  const narrowedClient = createUserPrincipal(user(), token({ n: ['2', '7'], dt: ['4', '9'] }), { networkIds: [1, 2], deviceTypeIds: [4] })
  t.same(narrowedClient.scope, { networkIds: [2], deviceTypeIds: [4] }, 'token ∩ assignments')

  const nothing = createUserPrincipal(user(), token({ n: null, dt: [] }), { networkIds: [1], deviceTypeIds: [1] })
  t.same(nothing.scope, { networkIds: [], deviceTypeIds: [] })
  t.equal(scopeIsEmpty(nothing.scope), true)
  t.equal(scopeIsEmpty(client.scope), false)

  t.equal(scopeAllowsDevice(client.scope, { networkId: 2, deviceTypeId: 4 }), true)
  t.equal(scopeAllowsDevice(client.scope, { networkId: 3, deviceTypeId: 4 }), false)
  t.equal(scopeAllowsDevice(client.scope, { networkId: 2, deviceTypeId: 5 }), false)
})

const plugin = (grants: PluginRecord['grants']): PluginRecord => ({
  id: 1, name: 'p', description: null, topicName: 'plugin_topic_1', filter: '*/*/*/*/*', status: 0, subscriptionId: null,
  activationCursor: null, userId: 5, parameters: null, grants
})
const ALL: PluginRecord['grants'] = { networkIds: 'all', deviceTypeIds: 'all' }

t.test('plugin principals: the grants within the owner scope, the token actions', async (t) => {
  const p = createPluginPrincipal(plugin(ALL), user(), { tpc: 'plugin_topic_1', a: [16], e: 1, t: 1 }, { networkIds: [3], deviceTypeIds: [] })
  t.same(p.scope, { networkIds: [3], deviceTypeIds: [] }, 'grants of all: the owner assignments')
  t.same([...p.actions], [16])
  t.equal(p.fullScope, false)

  const narrowed = createPluginPrincipal(plugin({ networkIds: [1], deviceTypeIds: [4] }), user(), { tpc: 'plugin_topic_1', a: [16], e: 1, t: 1 },
    { networkIds: [1, 2], deviceTypeIds: [4, 5] })
  t.same(narrowed.scope, { networkIds: [1], deviceTypeIds: [4] }, 'the registering token lists ∩ the assignments')

  const gone = createPluginPrincipal(plugin({ networkIds: [1, 2], deviceTypeIds: 'all' }), user(), { tpc: 'plugin_topic_1', a: [16], e: 1, t: 1 },
    { networkIds: [2], deviceTypeIds: [5] })
  t.same(gone.scope, { networkIds: [2], deviceTypeIds: [5] }, 'an unassigned network leaves the plugin too')

  const flag = createPluginPrincipal(plugin({ networkIds: [1], deviceTypeIds: [4] }), user({ allDeviceTypesAvailable: true }),
    { tpc: 'plugin_topic_1', a: [16], e: 1, t: 1 }, { networkIds: [1], deviceTypeIds: [] })
  t.same(flag.scope, { networkIds: [1], deviceTypeIds: [4] }, 'allDeviceTypesAvailable never widens the grants')

  const admin = createPluginPrincipal(plugin({ networkIds: [1], deviceTypeIds: 'all' }), user({ role: 0, allDeviceTypesAvailable: false }),
    { tpc: 'plugin_topic_1', a: [0], e: 1, t: 1 }, { networkIds: [], deviceTypeIds: [] })
  t.same(admin.scope, { networkIds: [1], deviceTypeIds: 'all' }, 'an admin owner: the grants alone')
  t.equal(admin.isAdmin, true)
  t.same([...admin.actions], ALL_ACTIONS.filter((id) => id !== Action.ManageUser && id !== Action.ManageToken),
    'no user-management action, whatever `a` says')
  t.same(pluginScope(ALL, user({ role: 0 }), { networkIds: [], deviceTypeIds: [] }), { networkIds: 'all', deviceTypeIds: 'all' })
})

t.test('requireAction: 401 anonymous, 403 missing action', async (t) => {
  t.throws(() => requireAction(undefined, Action.GetDevice), { code: 'UNAUTHENTICATED', message: 'Unauthorized' })
  const client = createUserPrincipal(user(), token({ a: [3] }), { networkIds: [], deviceTypeIds: [] })
  t.throws(() => requireAction(client, Action.GetNetwork), { code: 'FORBIDDEN', message: 'Access is denied' })
  t.doesNotThrow(() => requireAction(client, Action.GetDevice))
})

t.test('a frozen claim (a remembered token) expands to one shared set; others to a fresh one', async (t) => {
  const frozen = Object.freeze([12, 13])
  const set = expandActions(frozen)
  t.equal(expandActions(frozen), set)
  t.same([...set], [12, 13])
  t.not(expandActions(Object.freeze([12, 13])), set, 'keyed by the claim, not its contents')
  const open = [12, 13]
  t.not(expandActions(open), expandActions(open))
  t.same([...expandActions(Object.freeze([]))], [...CLIENT_ACTIONS])
  t.same([...expandActions(Object.freeze([0]))], [...ALL_ACTIONS])
})
