import type { Kysely } from 'kysely'
import type { PluginRecord, PluginRepository, PluginStatus } from '../../core/plugins/plugin-ports.js'
import { decodeJson } from '../codec.js'
import type { Database } from '../database.js'

export function toPluginRecord (row: { id: number, name: string, description: string | null, topic_name: string, filter: string, status: number, subscription_id: number | null, user_id: number, parameters: string | null }): PluginRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    topicName: row.topic_name,
    filter: row.filter,
    status: row.status as PluginStatus,
    subscriptionId: row.subscription_id === null ? null : Number(row.subscription_id),
    userId: Number(row.user_id),
    parameters: decodeJson(row.parameters)
  }
}

export function createPluginRepository (db: Kysely<Database>): PluginRepository {
  return {
    async findByTopic (topicName) {
      const row = await db.selectFrom('plugins').selectAll().where('topic_name', '=', topicName).executeTakeFirst()
      return row === undefined ? undefined : toPluginRecord(row)
    }
  }
}
