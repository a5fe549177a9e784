/**
 * Who is calling, as the permission checks see it (auth spec §4.1). Built once per request
 * from a verified token and the stored user (and its assignments), or the system principal
 * for CLI and embedded administration.
 */
import type { DataScope } from '../ports.js'
import { FULL_SCOPE } from '../ports.js'
import type { PluginRecord } from '../plugins/plugin-ports.js'
import type { UserRecord } from '../users/user-ports.js'
import { UserRole } from '../users/user-ports.js'
import type { Action } from './actions.js'
import { ALL_ACTIONS, expandActions } from './actions.js'
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

/** Builds the principal of a plugin token: the owner's scope, the token's actions (§4.1). */
export function createPluginPrincipal (plugin: PluginRecord, owner: UserRecord, token: PluginTokenPayload, assignments: Assignments): PluginPrincipal {
  const isAdmin = owner.role === UserRole.Administrator
  return {
    kind: 'plugin',
    plugin,
    owner,
    token,
    actions: expandActions(token.a),
    isAdmin,
    scope: {
      networkIds: isAdmin ? 'all' : assignments.networkIds,
      deviceTypeIds: owner.allDeviceTypesAvailable ? 'all' : assignments.deviceTypeIds
    },
    fullScope: false
  }
}
