/**
 * A plugin as delivery sees it: its stored filter as a {@link MessageSelector} (the same selector
 * streams and polls match with, message-filter.ts), narrowed to the plugin's reach.
 */
import type { DataScope, Store } from '../ports.js'
import type { MessageSelector } from '../realtime/message-filter.js'
import { FULL_SCOPE } from '../values.js'
import { UserStatus } from '../users/user-ports.js'
import type { StoredPluginFilter } from './plugin-filter.js'
import { parseStoredFilter } from './plugin-filter.js'
import { readPluginReach } from './plugin-grants.js'
import type { PluginRecord } from './plugin-ports.js'
import { PluginStatus } from './plugin-ports.js'

/** An active plugin of an active owner, with what its consumers read. */
export interface PluginState {
  plugin: PluginRecord
  filter: StoredPluginFilter
  /** The filter within the plugin's reach (grants within the owner's current assignments). */
  selector: MessageSelector
}

/**
 * The plugin now; undefined when deleted, null when nothing may flow (the plugin or its owner
 * is not active).
 *
 * @example
 * const state = await readPluginState(store, pluginId)
 * if (state === undefined) closeConnections()
 */
export async function readPluginState (store: Store, pluginId: number): Promise<PluginState | null | undefined> {
  const plugin = await store.plugins.findById(pluginId)
  if (plugin === undefined) return undefined
  if (plugin.status !== PluginStatus.ACTIVE) return null
  const owner = await store.users.findById(plugin.userId)
  if (owner === undefined || owner.status !== UserStatus.Active) return null
  const scope = await readPluginReach(store, plugin, owner)
  const filter = parseStoredFilter(plugin.filter)
  return { plugin, filter, selector: pluginSelector(filter, scope) }
}

/**
 * The selector of a stored filter within `scope` (device, or networks and device types
 * intersected with it; names). With the full scope it is what the router's keys and the live
 * check use; the read narrows it to the plugin's reach.
 *
 * @example
 * pluginSelector(parseStoredFilter('notification/1,2/*\/*\/temp'), FULL_SCOPE)
 * // { scope: { networkIds: [1, 2], deviceTypeIds: 'all' }, deviceIds: undefined, names: ['temp'] }
 */
export function pluginSelector (filter: StoredPluginFilter, scope: DataScope = FULL_SCOPE): MessageSelector {
  const narrow = (owner: 'all' | readonly number[], wanted: readonly number[] | undefined): 'all' | readonly number[] => {
    if (wanted === undefined) return owner
    if (owner === 'all') return wanted
    return wanted.filter((id) => owner.includes(id))
  }
  return {
    scope: { networkIds: narrow(scope.networkIds, filter.networkIds), deviceTypeIds: narrow(scope.deviceTypeIds, filter.deviceTypeIds) },
    deviceIds: filter.deviceId === undefined ? undefined : [filter.deviceId],
    names: filter.names
  }
}
