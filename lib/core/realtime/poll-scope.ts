/**
 * Which devices a poll or query may read (spec §6.7 with R2 and D7): the caller's scope,
 * narrowed by `deviceId`, `deviceIds`, `networkIds` and `deviceTypeIds`. Anything named that is
 * missing or outside the caller's scope answers 404, exactly like a missing one.
 */
import type { Action } from '../auth/actions.js'
import { requireAction, scopeAllowsDeviceType, scopeAllowsNetwork, scopeIsEmpty } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { loadDeviceInScope } from '../devices/device-access.js'
import { badRequest, notFound } from '../errors.js'
import type { Store } from '../ports.js'
import type { MessageScope } from './message-filter.js'
import { parseDeviceIds, parseIdList } from './poll-params.js'

export interface PollTargets {
  deviceId?: string
  /** CSV (R2). */
  deviceIds?: string
  /** CSV of integers. */
  networkIds?: string
  /** CSV of integers. */
  deviceTypeIds?: string
}

/**
 * Resolves the many-form targets to a {@link MessageScope}; `undefined` when the caller's
 * scope is empty (the poll answers `[]` at once, §7.3 step 1).
 *
 * @example
 * const scope = await resolvePollTargets(store, principal, Action.GetDeviceCommand, { networkIds: '1,2' })
 */
export async function resolvePollTargets (store: Store, principal: Principal | undefined, action: Action, targets: PollTargets): Promise<MessageScope | undefined> {
  requireAction(principal, action)
  if (targets.deviceId !== undefined && targets.deviceId.trim() === '') throw badRequest('Device id is wrong or empty')
  const listed = parseDeviceIds(targets.deviceIds)
  const networkIds = parseIdList(targets.networkIds)
  const deviceTypeIds = parseIdList(targets.deviceTypeIds)
  if (scopeIsEmpty(principal.scope)) return undefined

  const named = [...(targets.deviceId === undefined ? [] : [targets.deviceId]), ...(listed ?? [])]
  for (const id of new Set(named)) await loadDeviceInScope(store, principal, action, id)
  let deviceIds: string[] | undefined
  if (targets.deviceId !== undefined) deviceIds = listed === undefined || listed.includes(targets.deviceId) ? [targets.deviceId] : []
  else deviceIds = listed

  const { scope } = principal
  if (networkIds !== undefined) {
    const missing: number[] = []
    for (const id of networkIds) {
      if (!scopeAllowsNetwork(scope, id) || await store.networks.findById(id) === undefined) missing.push(id)
    }
    if (missing.length > 0) throw notFound(`Networks with such networkIds wasn't found: {[${missing.join(', ')}]}`)
  }
  if (deviceTypeIds !== undefined) {
    const missing: number[] = []
    for (const id of deviceTypeIds) {
      if (!scopeAllowsDeviceType(scope, id) || await store.deviceTypes.findById(id) === undefined) missing.push(id)
    }
    if (missing.length > 0) throw notFound(`Device types with such deviceTypeIds wasn't found: {[${missing.join(', ')}]}`)
  }
  return {
    scope: {
      networkIds: networkIds ?? scope.networkIds,
      deviceTypeIds: deviceTypeIds ?? scope.deviceTypeIds
    },
    deviceIds
  }
}
