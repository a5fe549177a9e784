/**
 * The device-scoped check shared by every `/device/{id}/...` endpoint (auth spec §4.2 step 5
 * with D7): a device that is missing or outside the caller's scope answers 404 with the same
 * message, so no device of another network is ever revealed.
 */
import type { Action } from '../auth/actions.js'
import { requireAction, scopeAllowsDevice } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { notFound } from '../errors.js'
import type { Store } from '../ports.js'
import type { DeviceRecord } from './device-ports.js'

export function deviceNotFound (deviceId: string): Error {
  return notFound(`Device with such deviceId = ${deviceId} not found`)
}

/**
 * Checks `action`, then loads the device if the principal may see it.
 *
 * @example
 * const device = await loadDeviceInScope(store, principal, Action.GetDevice, 'my-device')
 */
export async function loadDeviceInScope (store: Store, principal: Principal | undefined, action: Action, deviceId: string): Promise<DeviceRecord> {
  requireAction(principal, action)
  const device = await store.devices.findById(deviceId)
  if (device === undefined || !scopeAllowsDevice(principal.scope, device)) throw deviceNotFound(deviceId)
  return device
}
