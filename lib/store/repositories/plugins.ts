import type { Kysely, SelectQueryBuilder } from 'kysely'
import type { PluginFilter, PluginGrants, PluginRecord, PluginRepository, PluginStatus } from '../../core/plugins/plugin-ports.js'
import type { LogCursor } from '../../core/realtime/log-cursor.js'
import { decodeLogCursor, encodeLogCursor } from '../../core/realtime/log-cursor.js'
import { decodeJson, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { applyPage } from '../paging.js'

interface PluginRow {
  id: number
  name: string
  description: string | null
  topic_name: string
  filter: string
  status: number
  subscription_id: number | null
  activation_cursor: string | null
  user_id: number
  parameters: string | null
  network_grant: string
  device_type_grant: string
}

/**
 * A grant column: `*` all, otherwise comma-separated ids (empty: none).
 *
 * @example
 * encodeGrant([3, 5]) // '3,5'
 */
export function encodeGrant (grant: PluginGrants['networkIds']): string {
  return grant === 'all' ? '*' : grant.join(',')
}

/** Anything that is not `*` or a list of ids grants nothing: a damaged row never widens a plugin. */
export function decodeGrant (text: string): PluginGrants['networkIds'] {
  if (text === '*') return 'all'
  if (text === '') return []
  const parts = text.split(',')
  if (!parts.every((part) => /^\d{1,15}$/.test(part))) return []
  return parts.map(Number)
}

/**
 * The activation column: the subscription id it belongs to and the cursor. An instance of an
 * older version changes `subscription_id` without it; the stale cursor then names another
 * activation and reads as none.
 *
 * @example
 * encodeActivation(77, { notification: 12, command: 3, clock: 1763820000123 }) // '77@12.3.1763820000123'
 */
function encodeActivation (subscriptionId: number | null | undefined, cursor: LogCursor | null): string | null {
  if (cursor === null) return null
  if (typeof subscriptionId !== 'number') throw new Error('an activation cursor is written with its subscription id')
  return `${subscriptionId}@${encodeLogCursor(cursor)}`
}

/** The cursor of activation `subscriptionId`; null for none, another activation's, or a damaged one. */
function decodeActivation (subscriptionId: number | null, text: string | null): LogCursor | null {
  if (subscriptionId === null || text === null) return null
  const at = text.indexOf('@')
  if (at < 0 || text.slice(0, at) !== String(subscriptionId)) return null
  return decodeLogCursor(text.slice(at + 1)) ?? null
}

export function toPluginRecord (row: PluginRow): PluginRecord {
  const subscriptionId = row.subscription_id === null ? null : Number(row.subscription_id)
  return {
    id: Number(row.id),
    name: row.name,
    description: row.description,
    topicName: row.topic_name,
    filter: row.filter,
    status: Number(row.status) as PluginStatus,
    subscriptionId,
    activationCursor: decodeActivation(subscriptionId, row.activation_cursor),
    userId: Number(row.user_id),
    parameters: decodeJson(row.parameters),
    grants: { networkIds: decodeGrant(row.network_grant), deviceTypeIds: decodeGrant(row.device_type_grant) }
  }
}

export function createPluginRepository (db: Kysely<Database>): PluginRepository {
  function filtered<O> (
    query: SelectQueryBuilder<Database, 'plugins', O>, ownerId: number | 'all', filter: PluginFilter
  ): SelectQueryBuilder<Database, 'plugins', O> {
    if (ownerId !== 'all') query = query.where('user_id', '=', ownerId)
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId)
    if (filter.name !== undefined) query = query.where('name', '=', filter.name)
    if (filter.namePattern !== undefined) query = query.where('name', 'like', filter.namePattern)
    if (filter.topicName !== undefined) query = query.where('topic_name', '=', filter.topicName)
    if (filter.status !== undefined) query = query.where('status', '=', filter.status)
    return query
  }

  return {
    async findByTopic (topicName) {
      const row = await db.selectFrom('plugins').selectAll().where('topic_name', '=', topicName).executeTakeFirst()
      return row === undefined ? undefined : toPluginRecord(row)
    },
    async findById (id) {
      const row = await db.selectFrom('plugins').selectAll().where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toPluginRecord(row)
    },
    async insert (plugin) {
      const row = await db.insertInto('plugins').values({
        name: plugin.name,
        description: plugin.description,
        topic_name: plugin.topicName,
        filter: plugin.filter,
        status: plugin.status,
        subscription_id: plugin.subscriptionId,
        activation_cursor: encodeActivation(plugin.subscriptionId, plugin.activationCursor),
        user_id: plugin.userId,
        parameters: encodeJson(plugin.parameters),
        network_grant: encodeGrant(plugin.grants.networkIds),
        device_type_grant: encodeGrant(plugin.grants.deviceTypeIds)
      }).returning('id').executeTakeFirstOrThrow()
      return Number(row.id)
    },
    async update (id, patch) {
      const values: {
        name?: string, description?: string | null, filter?: string, status?: number
        subscription_id?: number | null, activation_cursor?: string | null, parameters?: string | null
        network_grant?: string, device_type_grant?: string
      } = {}
      if (patch.name !== undefined) values.name = patch.name
      if (patch.description !== undefined) values.description = patch.description
      if (patch.filter !== undefined) values.filter = patch.filter
      if (patch.status !== undefined) values.status = patch.status
      if (patch.subscriptionId !== undefined) values.subscription_id = patch.subscriptionId
      if (patch.activationCursor !== undefined) values.activation_cursor = encodeActivation(patch.subscriptionId, patch.activationCursor)
      if (patch.parameters !== undefined) values.parameters = encodeJson(patch.parameters)
      if (patch.grants !== undefined) {
        values.network_grant = encodeGrant(patch.grants.networkIds)
        values.device_type_grant = encodeGrant(patch.grants.deviceTypeIds)
      }
      if (Object.keys(values).length === 0) {
        return (await db.selectFrom('plugins').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
      }
      const result = await db.updateTable('plugins').set(values).where('id', '=', id).executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    async delete (id) {
      const result = await db.deleteFrom('plugins').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    },
    async list (ownerId, filter) {
      const order = filter.sortOrder === 'DESC' ? 'desc' : 'asc'
      let query = filtered(db.selectFrom('plugins').selectAll(), ownerId, filter)
      query = filter.sortField === 'name'
        ? query.orderBy('name', order).orderBy('id', 'asc')
        : query.orderBy('id', filter.sortField === 'id' ? order : 'asc')
      return (await applyPage(query, filter).execute()).map(toPluginRecord)
    },
    async count (ownerId, filter) {
      const row = await filtered(
        db.selectFrom('plugins').select((eb) => eb.fn.countAll<number>().as('count')), ownerId, filter
      ).executeTakeFirstOrThrow()
      return Number(row.count)
    }
  }
}
