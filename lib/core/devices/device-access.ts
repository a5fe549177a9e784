/**
 * The device-scoped check shared by every `/device/{id}/...` endpoint and its WebSocket
 * equivalents (auth spec §4.2 steps 5-6, D7): the 403 / 404 decision itself lives in
 * `auth/access.ts`.
 */
import type { Action } from '../auth/actions.js'
import { checkDeviceTarget, deviceNotFound } from '../auth/access.js'
import { requireAction, scopeAllowsDevice } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { forbidden } from '../errors.js'
import type { Store } from '../ports.js'
import type { DeviceRecord } from './device-ports.js'

export { deviceNotFound } from '../auth/access.js'

/**
 * Checks `action`, then loads the device if the principal may act on it: 403 for a restricted
 * principal (missing or out of scope alike), 404 for a full-scope one.
 *
 * @example
 * const device = await loadDeviceInScope(store, principal, Action.GetDevice, 'my-device')
 */
export async function loadDeviceInScope (
  store: Store, principal: Principal | undefined, action: Action, deviceId: string
): Promise<DeviceRecord> {
  requireAction(principal, action)
  // A plugin never passes the device check, so it need not read the row.
  if (principal.kind === 'plugin') return checkDeviceTarget<DeviceRecord>(principal, deviceId, undefined)
  return checkDeviceTarget(principal, deviceId, await store.devices.findById(deviceId))
}

/**
 * How a read names its device: `scope` is the D7 check of {@link loadDeviceInScope} (REST, and
 * every other WebSocket action); `found` is {@link loadDeviceOrNotFound} (WebSocket
 * `notification/get` and `notification/list` only).
 */
export type DeviceCheck = 'scope' | 'found'

/**
 * The one read that answers 404 for every caller (auth spec §4.4, §7 item 8, WebSocket
 * `notification/get` and `notification/list`): DeviceHive checks only the action there and its
 * tests expect 404 for a missing device even with client tokens; devicehub adds the scope check
 * with the same 404, so a restricted caller cannot tell a device outside its scope from a
 * missing one. A plugin is then refused as everywhere (403), only for a device in its reach.
 *
 * @example
 * const device = await loadDeviceOrNotFound(store, principal, Action.GetDeviceNotification, id)
 */
export async function loadDeviceOrNotFound (
  store: Store, principal: Principal | undefined, action: Action, deviceId: string
): Promise<DeviceRecord> {
  requireAction(principal, action)
  const device = await store.devices.findById(deviceId)
  if (device === undefined || !scopeAllowsDevice(principal.scope, device)) throw deviceNotFound(deviceId)
  if (principal.kind === 'plugin') throw forbidden()
  return device
}
