/** The purge queue of migration 0003: histories of deleted devices, removed in batches. */
import type { ExpressionBuilder, ExpressionWrapper, Kysely, SqlBool } from 'kysely'
import type { PurgeRepository } from '../../core/devices/device-ports.js'
import type { Database } from '../database.js'
import { purgeDeviceHistory } from './message-clock.js'

/** Queues the history of every device matching `where` (call it before deleting them, in the same transaction). */
export async function queuePurge (
  db: Kysely<Database>, where: (eb: ExpressionBuilder<Database, 'devices'>) => ExpressionWrapper<Database, 'devices', SqlBool>
): Promise<void> {
  await db.insertInto('message_purge').columns(['device_id', 'device_key'])
    .expression(db.selectFrom('devices').select(['device_id', 'id']).where(where))
    .execute()
}

export function createPurgeRepository (db: Kysely<Database>): PurgeRepository {
  return {
    async pending (limit) {
      const rows = await db.selectFrom('message_purge').selectAll().orderBy('id').limit(limit).execute()
      return rows.map((r) => ({ id: Number(r.id), deviceId: r.device_id, deviceKey: r.device_key === null ? null : Number(r.device_key) }))
    },
    async purgeBatch (entry, batch) {
      const notifications = await purgeDeviceHistory(db, 'notifications', entry.deviceId, entry.deviceKey, batch)
      const commands = await purgeDeviceHistory(db, 'commands', entry.deviceId, entry.deviceKey, batch)
      return notifications + commands
    },
    async done (id) {
      await db.deleteFrom('message_purge').where('id', '=', id).execute()
    }
  }
}
