import type { Kysely } from 'kysely'
import type { NotificationRecord, NotificationRepository } from '../../core/notifications/notification-ports.js'
import { applyPage } from '../paging.js'
import { decodeJson, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { batchClockReading, clockReading } from '../../core/realtime/client-timestamp.js'
import { currentDeviceKey, inTransaction, messaging, nextMessageTimestamp, pruneMessages, selectorWhere } from './message-clock.js'
import type { MessageWrites } from './message-writes.js'
import type { QueryTemplates } from '../query-templates.js'

export interface NotificationRow {
  id: number
  notification: string
  device_id: string
  network_id: number | null
  device_type_id: number | null
  timestamp: number
  parameters: string | null
  clock_ts: number | null
}


/** A row as the core's record; `timestamp` is the row's stamp, as for commands (toCommandRecord). */
export function toNotificationRecord (row: NotificationRow): NotificationRecord {
  const stamp = Number(row.clock_ts ?? row.timestamp)
  return {
    id: Number(row.id),
    notification: row.notification,
    deviceId: row.device_id,
    networkId: row.network_id === null ? null : Number(row.network_id),
    deviceTypeId: row.device_type_id === null ? null : Number(row.device_type_id),
    timestamp: stamp,
    parameters: decodeJson(row.parameters),
    stamp
  }
}

/**
 * Inserts go to the dialect's own `writes` when it has them (PostgreSQL: one statement with the
 * clock step and the ring, pg-message-writes.ts); otherwise they take the clock row's lock in a
 * transaction.
 */
export function createNotificationRepository (
  db: Kysely<Database>, writes?: MessageWrites, templates?: QueryTemplates
): NotificationRepository {
  return {
    async insert (n, now = Date.now(), ring) {
      if (writes !== undefined) return writes.insertNotification(n, now, ring)
      return inTransaction(db, async (trx) => {
        // The clock first: its row lock orders concurrent writers (R9). The stamp is the
        // timestamp, a client's kept only when the clock can take it (issue #23).
        const timestamp = await nextMessageTimestamp(trx, clockReading(n.timestamp, now), 1, templates)
        const row = await messaging(trx).insertInto('notifications').values({
          notification: n.notification,
          device_id: n.deviceId,
          network_id: n.networkId,
          device_type_id: n.deviceTypeId,
          parameters: encodeJson(n.parameters),
          timestamp,
          clock_ts: timestamp,
          stored_at: now,
          device_key: currentDeviceKey(n.deviceId)
        }).returningAll().executeTakeFirstOrThrow()
        return toNotificationRecord(row)
      })
    },

    async insertMany (list, now, ring) {
      if (list.length === 0) return []
      if (writes !== undefined) return writes.insertNotifications(list, now, ring)
      return inTransaction(db, async (trx) => {
        // One clock step for the batch: the stamps are last+1 .. last+n.
        const last = await nextMessageTimestamp(trx, batchClockReading(list, now), list.length, templates)
        let next = last - list.length
        const rows = await messaging(trx).insertInto('notifications').values(list.map((n) => {
          const stamp = ++next
          return {
            notification: n.notification,
            device_id: n.deviceId,
            network_id: n.networkId,
            device_type_id: n.deviceTypeId,
            parameters: encodeJson(n.parameters),
            timestamp: stamp,
            clock_ts: stamp,
            stored_at: now,
            device_key: currentDeviceKey(n.deviceId)
          }
        })).returningAll().execute()
        // Identity values follow the VALUES order; RETURNING order is not promised.
        return rows.map(toNotificationRecord).sort((a, b) => a.id - b.id)
      })
    },

    async findById (id) {
      const row = await messaging(db).selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toNotificationRecord(row)
    },

    async findForDevice (deviceId, id) {
      const row = await messaging(db).selectFrom('notifications').selectAll().where('id', '=', id).where('device_id', '=', deviceId)
        .where('device_key', '=', currentDeviceKey(deviceId)).executeTakeFirst()
      return row === undefined ? undefined : toNotificationRecord(row)
    },

    async query (filter) {
      const names = filter.notification === undefined ? undefined : [filter.notification]
      let query = messaging(db).selectFrom('notifications').selectAll()
        .where(selectorWhere({ ...filter, names }, 'notification', { excludeSystem: false }))
      // By the stamp, the timestamp every answer shows (toNotificationRecord).
      if (filter.start !== undefined) query = query.where('clock_ts', '>=', filter.start)
      if (filter.end !== undefined) query = query.where('clock_ts', '<=', filter.end)
      const order = filter.sortOrder === 'ASC' ? 'asc' : 'desc'
      query = filter.sortField === 'notification' ? query.orderBy('notification', order) : query.orderBy('clock_ts', order)
      const rows = await applyPage(query.orderBy('id', order), filter).execute()
      return rows.map(toNotificationRecord)
    },

    async prune (before, batch) {
      return pruneMessages(db, 'notifications', before, batch)
    }
  }
}
