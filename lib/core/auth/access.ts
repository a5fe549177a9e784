/**
 * The one place that decides between 403 and 404 for a named network, device type or device
 * (auth spec §4.2 steps 3-6 and the matrix of §4.4, decision D7 as revised). REST and
 * WebSocket call these same functions, so both transports answer alike:
 *
 * - a restricted principal (its token does not grant all networks and all device types) gets
 *   403 `Access is denied` for a target it cannot see, whether or not it exists, so the answer
 *   never tells it what exists;
 * - a full-scope principal passes the target check and gets 404 for a missing row, and for a
 *   row outside its data scope (§4.3), also indistinguishable from a missing one.
 */
import { forbidden, notFound } from '../errors.js'
import { scopeAllowsDevice } from './permissions.js'
import type { Grant, Principal } from './principal.js'

/** The networks the token itself names (§4.1); for plugin tokens the owner's, for the system all. */
export function networkGrantOf (principal: Principal): Grant {
  if (principal.kind === 'user') return principal.networkGrant
  return principal.scope.networkIds
}

/** The device types the token itself names, after the user's `allDeviceTypesAvailable` override. */
export function deviceTypeGrantOf (principal: Principal): Grant {
  if (principal.kind === 'user') return principal.deviceTypeGrant
  return principal.scope.deviceTypeIds
}

function grants (grant: Grant, id: number): boolean {
  return grant === 'all' || grant.includes(id)
}

/**
 * §4.2 step 3: a network named by id for `GetNetwork` / `ManageNetwork`. Looks at the token
 * only, never at the database, so an id that does not exist is refused like any other.
 *
 * @example
 * requireNetworkTarget(principal, 7) // throws 403 unless the token grants network 7 or all
 */
export function requireNetworkTarget (principal: Principal, networkId: number): void {
  if (!grants(networkGrantOf(principal), networkId)) throw forbidden()
}

/** §4.2 step 4: the same for a device type named by id (`GetDeviceType` / `ManageDeviceType`). */
export function requireDeviceTypeTarget (principal: Principal, deviceTypeId: number): void {
  if (!grants(deviceTypeGrantOf(principal), deviceTypeId)) throw forbidden()
}

/** The not-found text of a device (spec §5.4). */
export function deviceNotFound (deviceId: string): Error {
  return notFound(`Device with such deviceId = ${deviceId} not found`)
}

/**
 * §4.2 steps 5 and 6 for a device named by id: `device` is the stored row or undefined. A plugin
 * principal is refused (DeviceHive compares the device id with the plugin's topic); a restricted
 * principal gets 403 unless the device exists and lies in its scope; a full-scope principal
 * gets 404 when it is missing or outside its data scope.
 *
 * @example
 * const device = checkDeviceTarget(principal, id, await store.devices.findById(id))
 */
export function checkDeviceTarget<T extends { networkId: number, deviceTypeId: number }> (
  principal: Principal, deviceId: string, device: T | undefined
): T {
  if (principal.kind === 'plugin') throw forbidden()
  const visible = device !== undefined && scopeAllowsDevice(principal.scope, device)
  if (!principal.fullScope) {
    if (!visible) throw forbidden()
    return device
  }
  if (!visible) throw deviceNotFound(deviceId)
  return device
}

/**
 * Targets listed in a many-device read (`/device/{command,notification}/poll`, WebSocket
 * subscriptions): DeviceHive decides by role there (spec §6.7, §4.4), an administrator gets
 * 404 with the ids that were not found, anyone else 403.
 *
 * @example
 * throw listedTargetsRefused(principal, `Networks with such networkIds wasn't found: {[${ids}]}`)
 */
export function listedTargetsRefused (principal: Principal, notFoundMessage: string): Error {
  return principal.isAdmin ? notFound(notFoundMessage) : forbidden()
}

