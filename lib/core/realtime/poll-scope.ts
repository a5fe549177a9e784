/**
 * Which devices a poll or query may read (spec §6.7 with R2 and D7): the caller's scope,
 * narrowed by `deviceId`, `deviceIds`, `networkIds` and `deviceTypeIds`. Anything named that is
 * missing or outside the caller's scope is refused by role, as DeviceHive does for these reads
 * (D7, §6.7): an administrator gets 404 naming what was not found, anyone else 403.
 */
import type { Action } from '../auth/actions.js'
import { listedTargetsRefused } from '../auth/access.js'
import { requireAction, scopeAllowsDevice, scopeAllowsDeviceType, scopeAllowsNetwork, scopeIsEmpty } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { badRequest } from '../errors.js'
import type { Store } from '../ports.js'
import type { MessageScope } from './message-filter.js'

/** Typed poll targets; the REST adapter parses its CSV query parameters into these. */
export interface PollTargets {
  deviceId?: string
  /** R2: several devices. */
  deviceIds?: readonly string[]
  networkIds?: readonly number[]
  deviceTypeIds?: readonly number[]
}

/**
 * The listed `networkIds` and `deviceTypeIds` of a poll, a WebSocket subscription or a stream
 * (auth spec §4.4, §6.5; REST §6.7): each must exist and lie in the caller's data scope. If any
 * does not, DeviceHive decides by role: an administrator gets 404 naming every id not found,
 * anyone else 403 `Access is denied` ({@link listedTargetsRefused}), whether the ids exist or not.
 * Networks are checked before device types; absent or empty lists check nothing.
 *
 * @example
 * await requireListedTargets(store, principal, [1, 999], undefined)
 * // admin: 404 `Networks with such networkIds wasn't found: {[999]}`; client: 403
 */
export async function requireListedTargets (
  store: Store, principal: Principal, networkIds: readonly number[] | undefined, deviceTypeIds: readonly number[] | undefined
): Promise<void> {
  const { scope } = principal
  if (networkIds !== undefined && networkIds.length > 0) {
    const missing: number[] = []
    for (const id of networkIds) {
      if (!scopeAllowsNetwork(scope, id) || await store.networks.findById(id) === undefined) missing.push(id)
    }
    if (missing.length > 0) throw listedTargetsRefused(principal, `Networks with such networkIds wasn't found: {[${missing.join(', ')}]}`)
  }
  if (deviceTypeIds !== undefined && deviceTypeIds.length > 0) {
    const missing: number[] = []
    for (const id of deviceTypeIds) {
      if (!scopeAllowsDeviceType(scope, id) || await store.deviceTypes.findById(id) === undefined) missing.push(id)
    }
    if (missing.length > 0) throw listedTargetsRefused(
      principal, `Device types with such deviceTypeIds wasn't found: {[${missing.join(', ')}]}`
    )
  }
}

/**
 * Resolves the many-form targets to a {@link MessageScope}; `undefined` when the caller's
 * scope is empty (the poll answers `[]` at once, §7.3 step 1).
 *
 * @example
 * const scope = await resolvePollTargets(store, principal, Action.GetDeviceCommand, { networkIds: [1, 2] })
 */
export async function resolvePollTargets (
  store: Store, principal: Principal | undefined, action: Action, targets: PollTargets
): Promise<MessageScope | undefined> {
  requireAction(principal, action)
  if (targets.deviceId !== undefined && targets.deviceId.trim() === '') throw badRequest('Device id is wrong or empty')
  const listed = targets.deviceIds === undefined || targets.deviceIds.length === 0 ? undefined : targets.deviceIds
  const networkIds = targets.networkIds === undefined || targets.networkIds.length === 0 ? undefined : targets.networkIds
  const deviceTypeIds = targets.deviceTypeIds === undefined || targets.deviceTypeIds.length === 0 ? undefined : targets.deviceTypeIds

  const named = [...(targets.deviceId === undefined ? [] : [targets.deviceId]), ...(listed ?? [])]
  for (const id of new Set(named)) {
    const device = await store.devices.findById(id)
    if (device === undefined || !scopeAllowsDevice(principal.scope, device)) {
      throw listedTargetsRefused(principal, `Device with such deviceId = ${id} not found`)
    }
  }
  let deviceIds: readonly string[] | undefined
  if (targets.deviceId !== undefined) deviceIds = listed === undefined || listed.includes(targets.deviceId) ? [targets.deviceId] : []
  else deviceIds = listed

  await requireListedTargets(store, principal, networkIds, deviceTypeIds)
  const { scope } = principal
  if (scopeIsEmpty(scope)) return undefined
  return {
    scope: {
      networkIds: networkIds ?? scope.networkIds,
      deviceTypeIds: deviceTypeIds ?? scope.deviceTypeIds
    },
    deviceIds
  }
}
