/**
 * What a message read selects, as plain values: the store turns it into SQL, the long-poll
 * waiter applies the same rules to a live item. Shared by commands and notifications.
 */
import type { DataScope } from '../values.js'

/** The server-generated device notifications (R3): only delivered when a poll names them. */
export const SYSTEM_NOTIFICATIONS: readonly string[] = ['$device-add', '$device-update', '$device-online', '$device-offline']

export interface MessageScope {
  /** Networks and device types the caller may see (already intersected with any request filter). */
  scope: DataScope
  /** Restrict to these devices (`undefined` = any visible device). */
  deviceIds?: readonly string[]
}

export interface MessageSelector extends MessageScope {
  /** Exact names; `undefined` = every name except the system notifications. */
  names?: readonly string[]
}

export interface ScopedItem {
  deviceId: string
  networkId: number | null
  deviceTypeId: number | null
}

/** True when `item` lies in the selector's devices, networks and device types. */
export function inMessageScope (selector: MessageScope, item: ScopedItem): boolean {
  const { scope } = selector
  if (selector.deviceIds !== undefined && !selector.deviceIds.includes(item.deviceId)) return false
  if (scope.networkIds !== 'all' && (item.networkId === null || !scope.networkIds.includes(item.networkId))) return false
  if (scope.deviceTypeIds !== 'all' && (item.deviceTypeId === null || !scope.deviceTypeIds.includes(item.deviceTypeId))) return false
  return true
}

/** Name rule of polls (R3): listed names only, or everything but the system notifications. */
export function nameSelected (names: readonly string[] | undefined, name: string): boolean {
  return names === undefined ? !SYSTEM_NOTIFICATIONS.includes(name) : names.includes(name)
}

/** A live message as the filter sees it: where it is and its name (a bus event is one). */
export interface NamedItem extends ScopedItem {
  /** Command or notification name. */
  name: string
}

/**
 * The one filter of a live message: in the selector's devices, networks and device types, and
 * selected by name (R3). Streams and plugin delivery decide with it before any read.
 *
 * @example
 * selects({ scope: { networkIds: [1], deviceTypeIds: 'all' } }, { deviceId: 'd', networkId: 1, deviceTypeId: null, name: 'temp' }) // true
 */
export function selects (selector: MessageSelector, item: NamedItem): boolean {
  return inMessageScope(selector, item) && nameSelected(selector.names, item.name)
}
