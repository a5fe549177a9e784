/**
 * Who is calling, as the permission checks see it (auth spec §4.1). Built once per request
 * from a verified token and the stored user (and its assignments), or the system principal
 * for CLI and embedded administration.
 */
import type { DataScope } from '../ports.js'
import { FULL_SCOPE } from '../ports.js'
import type { PluginGrants, PluginRecord } from '../plugins/plugin-ports.js'
import type { UserRecord } from '../users/user-ports.js'
import { UserRole } from '../users/user-ports.js'
import type { Action } from './actions.js'
import { ALL_ACTIONS, Action as A, expandActions } from './actions.js'
import type { PluginTokenPayload, UserTokenPayload } from './jwt.js'

/** What a token itself grants over networks or device types, before user assignments. */
export type Grant = 'all' | readonly number[]

interface PrincipalBase {
  readonly actions: ReadonlySet<Action>
  /** Role of the user (the plugin's owner for plugin tokens). */
  readonly isAdmin: boolean
  /** Effective data scope: token grants intersected with the user's assignments (§4.3). */
  readonly scope: DataScope
  /** The token grants all networks and all device types (a "full-scope principal", §4.2). */
  readonly fullScope: boolean
}

export interface UserPrincipal extends PrincipalBase {
  readonly kind: 'user'
  readonly user: UserRecord
  readonly token: UserTokenPayload
  readonly networkGrant: Grant
  readonly deviceTypeGrant: Grant
}

export interface PluginPrincipal extends PrincipalBase {
  readonly kind: 'plugin'
  readonly plugin: PluginRecord
  readonly owner: UserRecord
  readonly token: PluginTokenPayload
}

/** The process itself (CLI, embedding code): every action, every row. */
export interface SystemPrincipal extends PrincipalBase {
  readonly kind: 'system'
}

export type Principal = UserPrincipal | PluginPrincipal | SystemPrincipal

export const systemPrincipal: SystemPrincipal = {
  kind: 'system',
  actions: new Set(ALL_ACTIONS),
  isAdmin: true,
  scope: FULL_SCOPE,
  fullScope: true
}

export interface Assignments {
  networkIds: readonly number[]
  deviceTypeIds: readonly number[]
}

function grantOf (claim: readonly string[] | null): Grant {
  if (claim === null) return []
  if (claim.includes('*')) return 'all'
  return claim.map(Number)
}

function intersect (grant: Grant, assigned: readonly number[]): readonly number[] {
  if (grant === 'all') return assigned
  const allowed = new Set(grant)
  return assigned.filter((id) => allowed.has(id))
}

/**
 * Builds the principal of a user token. `assignments` are the user's assigned networks and
 * device types (only read for clients; admins are bounded by the token alone).
 */
export function createUserPrincipal (user: UserRecord, token: UserTokenPayload, assignments: Assignments): UserPrincipal {
  const isAdmin = user.role === UserRole.Administrator
  const networkGrant = grantOf(token.n)
  // The user's allDeviceTypesAvailable flag overrides `dt` (§4.1, tested by DeviceHive).
  const deviceTypeGrant: Grant = user.allDeviceTypesAvailable ? 'all' : grantOf(token.dt)
  const networkIds = isAdmin ? networkGrant : intersect(networkGrant, assignments.networkIds)
  const deviceTypeIds = isAdmin || user.allDeviceTypesAvailable
    ? deviceTypeGrant
    : intersect(deviceTypeGrant, assignments.deviceTypeIds)
  return {
    kind: 'user',
    user,
    token,
    actions: expandActions(token.a),
    isAdmin,
    networkGrant,
    deviceTypeGrant,
    scope: { networkIds, deviceTypeIds },
    fullScope: networkGrant === 'all' && deviceTypeGrant === 'all'
  }
}

/**
 * User-management rights (issue 22): a plugin token never acts on accounts, its owner's
 * included, whatever its `a` claim lists. ManageUser (`/user` lists, reads, changes) and
 * ManageToken (`/token/create`) are dropped from its actions; the `/user/{id}/...` links refuse
 * plugin principals in the user service, and `/user/current` has no user for them (401).
 */
export const PLUGIN_EXCLUDED_ACTIONS: readonly Action[] = [A.ManageUser, A.ManageToken]

function pluginActions (claim: readonly number[] | null): ReadonlySet<Action> {
  const actions = expandActions(claim)
  if (!PLUGIN_EXCLUDED_ACTIONS.some((action) => actions.has(action))) return actions
  const kept = new Set(actions)
  for (const action of PLUGIN_EXCLUDED_ACTIONS) kept.delete(action)
  return kept
}

/**
 * What a plugin reaches (issue 22, D11): the grants of the token that registered or last
 * updated it, intersected with its owner's assignments now, by the rules of a user token
 * ({@link createUserPrincipal}): an administrator owner is bounded by the grants alone, a
 * client also by its networks, and by its device types unless all are available to it. The
 * REST, long-poll and WebSocket principals of its tokens and the proxy's delivery all use it.
 *
 * @example
 * pluginScope({ networkIds: [1], deviceTypeIds: 'all' }, owner, { networkIds: [1, 2], deviceTypeIds: [4] })
 * // { networkIds: [1], deviceTypeIds: [4] } for a client owner without allDeviceTypesAvailable
 */
export function pluginScope (grants: PluginGrants, owner: UserRecord, assignments: Assignments): DataScope {
  const isAdmin = owner.role === UserRole.Administrator
  return {
    networkIds: isAdmin ? grants.networkIds : intersect(grants.networkIds, assignments.networkIds),
    deviceTypeIds: isAdmin || owner.allDeviceTypesAvailable
      ? grants.deviceTypeIds
      : intersect(grants.deviceTypeIds, assignments.deviceTypeIds)
  }
}

/**
 * What a user principal grants a plugin it registers or updates: its token's lists (after the
 * `allDeviceTypesAvailable` override), not yet intersected with the assignments, as a token's are.
 */
export function grantsOf (principal: UserPrincipal): PluginGrants {
  return { networkIds: principal.networkGrant, deviceTypeIds: principal.deviceTypeGrant }
}

/**
 * Builds the principal of a plugin token: the plugin's scope ({@link pluginScope}), the
 * token's actions without the user-management ones (§4.1 as revised by D11).
 */
export function createPluginPrincipal (
  plugin: PluginRecord, owner: UserRecord, token: PluginTokenPayload, assignments: Assignments
): PluginPrincipal {
  return {
    kind: 'plugin',
    plugin,
    owner,
    token,
    actions: pluginActions(token.a),
    isAdmin: owner.role === UserRole.Administrator,
    scope: pluginScope(plugin.grants, owner, assignments),
    fullScope: false
  }
}

/**
 * Whether `now` grants everything `before` granted: the role, every action, every network and
 * device type of the scope. A principal rebuilt after a change passes unless rights were lost.
 *
 * @example
 * grantsAll(rebuilt, opened) // false once a network of `opened` was unassigned
 */
export function grantsAll (now: Principal, before: Principal): boolean {
  if (before.isAdmin && !now.isAdmin) return false
  for (const action of before.actions) if (!now.actions.has(action)) return false
  return covers(now.scope.networkIds, before.scope.networkIds) && covers(now.scope.deviceTypeIds, before.scope.deviceTypeIds)
}

function covers (now: 'all' | readonly number[], before: 'all' | readonly number[]): boolean {
  if (now === 'all') return true
  if (before === 'all') return false
  const held = new Set(now)
  return before.every((id) => held.has(id))
}
