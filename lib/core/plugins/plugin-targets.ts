/**
 * The networks, device types and device a plugin filter names (`POST` / `PUT /plugin`) must be
 * ones the caller may see. DeviceHive does not check them at all; devicehub answers as D7 does
 * for any other named target, so the answer never tells a restricted caller what exists:
 *
 * - a restricted principal (a token not granting all networks and all device types, and every
 *   plugin token) gets 403 `Access is denied` for a target it cannot see, missing or not;
 * - a full-scope principal (administrators, `["*"]` tokens) gets the not-found 404 for a target
 *   that does not exist or lies outside its data scope.
 */
import { scopeAllowsDevice, scopeAllowsDeviceType, scopeAllowsNetwork } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { deviceNotFound } from '../devices/device-access.js'
import { forbidden, notFound } from '../errors.js'
import type { Store } from '../ports.js'
import type { PluginFilterSpec } from './plugin-filter.js'

/**
 * Throws unless every target of `spec` exists and lies in the principal's data scope.
 *
 * @example
 * await checkPluginTargets(store, principal, buildPluginFilter({ networkIds: '1,7' }))
 * // client token without network 7: 403 `Access is denied`; admin, no network 7: 404 `Network with id = 7 not found`
 */
export async function checkPluginTargets (store: Store, principal: Principal, spec: PluginFilterSpec): Promise<void> {
  const refuse = (notFoundMessage: string): Error => principal.fullScope ? notFound(notFoundMessage) : forbidden()
  for (const id of spec.networkIds) {
    if (!scopeAllowsNetwork(principal.scope, id) || await store.networks.findById(id) === undefined) {
      throw refuse(`Network with id = ${id} not found`)
    }
  }
  for (const id of spec.deviceTypeIds) {
    if (!scopeAllowsDeviceType(principal.scope, id) || await store.deviceTypes.findById(id) === undefined) {
      throw refuse(`Device type with id = ${id} not found`)
    }
  }
  if (spec.deviceId !== undefined) {
    const device = await store.devices.findById(spec.deviceId)
    if (device === undefined || !scopeAllowsDevice(principal.scope, device)) {
      throw principal.fullScope ? deviceNotFound(spec.deviceId) : forbidden()
    }
  }
}
