/**
 * The permission checks (auth spec §4.2 with D7): first the action (401 when anonymous,
 * 403 `Access is denied` when missing), then the data scope, where anything outside the
 * caller's scope is answered as if it did not exist (404, never a leak).
 */
import { DeviceHubError, Messages } from '../errors.js'
import type { DataScope } from '../ports.js'
import type { Action } from './actions.js'
import type { Principal } from './principal.js'

/**
 * Throws unless the principal holds `action`.
 *
 * @example
 * requireAction(principal, Action.GetNetwork)
 */
export function requireAction (principal: Principal | undefined, action: Action): asserts principal is Principal {
  if (principal === undefined) throw new DeviceHubError('UNAUTHENTICATED', Messages.unauthorized)
  if (!principal.actions.has(action)) throw new DeviceHubError('FORBIDDEN', Messages.accessDenied)
}

export function scopeAllowsNetwork (scope: DataScope, networkId: number): boolean {
  return scope.networkIds === 'all' || scope.networkIds.includes(networkId)
}

export function scopeAllowsDeviceType (scope: DataScope, deviceTypeId: number): boolean {
  return scope.deviceTypeIds === 'all' || scope.deviceTypeIds.includes(deviceTypeId)
}

/** A device is visible when both its network and its device type are (§4.3). */
export function scopeAllowsDevice (scope: DataScope, device: { networkId: number, deviceTypeId: number }): boolean {
  return scopeAllowsNetwork(scope, device.networkId) && scopeAllowsDeviceType(scope, device.deviceTypeId)
}

/** True when the scope can see nothing at all in one dimension (lists short-circuit to []). */
export function scopeIsEmpty (scope: DataScope): boolean {
  return (scope.networkIds !== 'all' && scope.networkIds.length === 0) ||
    (scope.deviceTypeIds !== 'all' && scope.deviceTypeIds.length === 0)
}
