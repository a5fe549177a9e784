import type { LogCursor } from '../realtime/log-cursor.js'
import type { DataScope, Page } from '../values.js'

export const PluginStatus = { ACTIVE: 0, INACTIVE: 1, CREATED: 2 } as const
export type PluginStatus = (typeof PluginStatus)[keyof typeof PluginStatus]

export interface PluginRecord {
  id: number
  name: string
  description: string | null
  topicName: string
  filter: string
  status: PluginStatus
  subscriptionId: number | null
  /**
   * Where the consumers of activation `subscriptionId` start, on every instance: the log's mark
   * when it was made, stored with it (a patch that sets it sets `subscriptionId` too). Null
   * before any activation, and for one made by a version that did not store it.
   */
  activationCursor: LogCursor | null
  userId: number
  parameters: Record<string, unknown> | null
  /**
   * The networks and device types of the token that registered the plugin or last updated it
   * (`'all'` when that token granted all). Every principal built from a plugin token, and the
   * proxy's delivery, sees at most these, intersected with the owner's assignments at read time.
   */
  grants: PluginGrants
}

/** What a plugin may reach at most: the lists of the token that registered or updated it. */
export type PluginGrants = DataScope

/** `GET /plugin` filters after validation (auth spec §2.7). */
export interface PluginFilter extends Page {
  name?: string
  namePattern?: string
  topicName?: string
  status?: PluginStatus
  userId?: number
  sortField?: 'id' | 'name'
}

export type PluginPatch = Partial<Pick<PluginRecord,
  'name' | 'description' | 'filter' | 'status' | 'subscriptionId' | 'activationCursor' | 'parameters' | 'grants'>>

export interface PluginRepository {
  findByTopic(topicName: string): Promise<PluginRecord | undefined>
  findById(id: number): Promise<PluginRecord | undefined>
  insert(plugin: Omit<PluginRecord, 'id'>): Promise<number>
  update(id: number, patch: PluginPatch): Promise<boolean>
  delete(id: number): Promise<boolean>
  /** Plugins owned by `ownerId` (`'all'` = any owner), filtered and paged. */
  list(ownerId: number | 'all', filter: PluginFilter): Promise<PluginRecord[]>
  count(ownerId: number | 'all', filter: PluginFilter): Promise<number>
}
