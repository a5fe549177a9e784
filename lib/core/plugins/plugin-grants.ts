/**
 * Comparing what plugins and tokens reach (issue 22): a plugin token is never minted by a token
 * that reaches less than the plugin, and a plugin whose grants shrink revokes its open waits.
 */
import { pluginScope } from '../auth/principal.js'
import type { DataScope, Store } from '../ports.js'
import type { UserRecord } from '../users/user-ports.js'
import { UserRole } from '../users/user-ports.js'
import type { PluginRecord } from './plugin-ports.js'

function idsWithin (inner: DataScope['networkIds'], outer: DataScope['networkIds']): boolean {
  if (outer === 'all') return true
  if (inner === 'all') return false
  const allowed = new Set(outer)
  return inner.every((id) => allowed.has(id))
}

/**
 * Whether everything `inner` reaches, `outer` reaches too, networks and device types alike.
 *
 * @example
 * scopeWithin({ networkIds: [1], deviceTypeIds: 'all' }, { networkIds: [1, 2], deviceTypeIds: 'all' }) // true
 * scopeWithin({ networkIds: 'all', deviceTypeIds: [] }, { networkIds: [1], deviceTypeIds: [] }) // false
 */
export function scopeWithin (inner: DataScope, outer: DataScope): boolean {
  return idsWithin(inner.networkIds, outer.networkIds) && idsWithin(inner.deviceTypeIds, outer.deviceTypeIds)
}

/**
 * What a plugin of `owner` reaches now ({@link pluginScope}), reading the owner's assignments.
 *
 * @example
 * const reach = await readPluginReach(store, plugin, owner)
 */
export async function readPluginReach (store: Store, plugin: PluginRecord, owner: UserRecord): Promise<DataScope> {
  const admin = owner.role === UserRole.Administrator
  return pluginScope(plugin.grants, owner, {
    networkIds: admin ? [] : await store.users.networkIds(owner.id),
    deviceTypeIds: admin || owner.allDeviceTypesAvailable ? [] : await store.users.deviceTypeIds(owner.id)
  })
}
