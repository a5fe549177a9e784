/**
 * The effective scope of a subscription (auth spec §6.5): one device, or the given networks and
 * device types within the caller's data scope. Listed networks and device types are refused as
 * the long polls refuse them (poll-scope.ts, auth spec §4.4): by role, not by token scope. The
 * result is a {@link MessageSelector}, so a live item is matched with the same rules as polls
 * (message-filter.ts), at event time.
 */
import type { Action } from '../auth/actions.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { loadDeviceInScope } from '../devices/device-access.js'
import { badRequest, forbidden } from '../errors.js'
import type { Store } from '../ports.js'
import type { MessageSelector } from './message-filter.js'
import { requireListedTargets } from './poll-scope.js'

/** Typed subscription filters; transports parse their own encodings into these. */
export interface SubscribeTargets {
  /** One device; the other targets are then ignored (names still apply). */
  deviceId?: string
  /**
   * Several devices (R2; Server-Sent Events). The WebSocket API ignores its plural `deviceIds`
   * (§6.5), so its adapter never passes it.
   */
  deviceIds?: readonly string[]
  networkIds?: readonly number[]
  deviceTypeIds?: readonly number[]
  /** Exact names; absent or empty = every name except the system notifications (R3). */
  names?: readonly string[]
}

/**
 * Checks `action` and the targets; answers the selector a stream matches against.
 *
 * @example
 * const selector = await resolveSubscribeTargets(store, principal, Action.GetDeviceNotification, { networkIds: [1] })
 */
export async function resolveSubscribeTargets (
  store: Store, principal: Principal | undefined, action: Action, targets: SubscribeTargets
): Promise<MessageSelector> {
  requireAction(principal, action)
  const names = targets.names === undefined || targets.names.length === 0 ? undefined : targets.names
  if (targets.deviceId !== undefined) {
    if (targets.deviceId.trim() === '') throw badRequest('Device id is wrong or empty')
    await loadDeviceInScope(store, principal, action, targets.deviceId)
    return { scope: principal.scope, deviceIds: [targets.deviceId], names }
  }
  const { scope } = principal
  if ((scope.networkIds !== 'all' && scope.networkIds.length === 0) ||
    (scope.deviceTypeIds !== 'all' && scope.deviceTypeIds.length === 0)) {
    throw forbidden('No access to any device type or network')
  }
  // The same rule and messages as the long polls (§4.4): by role, every refused id named.
  await requireListedTargets(store, principal, targets.networkIds, targets.deviceTypeIds)
  let deviceIds: string[] | undefined
  if (targets.deviceIds !== undefined && targets.deviceIds.length > 0) {
    deviceIds = [...new Set(targets.deviceIds)]
    for (const id of deviceIds) await loadDeviceInScope(store, principal, action, id)
  }
  return {
    deviceIds,
    scope: {
      networkIds: targets.networkIds !== undefined && targets.networkIds.length > 0 ? [...targets.networkIds] : scope.networkIds,
      deviceTypeIds: targets.deviceTypeIds !== undefined && targets.deviceTypeIds.length > 0
        ? [...targets.deviceTypeIds]
        : scope.deviceTypeIds
    },
    names
  }
}
