import type { Kysely } from 'kysely'
import type { NewNotification, NotificationRecord, NotificationRepository } from '../../core/notifications/notification-ports.js'
import type { StoreRing } from '../../core/commands/command-ports.js'
import { applyPage } from '../paging.js'
import { decodeJson, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { createWriteCombiner } from '../../core/write-combiner.js'
import { batchClockReading, clockReading } from '../../core/realtime/client-timestamp.js'
import { currentDeviceKey, inTransaction, messaging, nextMessageTimestamp, pruneMessages, selectorWhere } from './message-clock.js'
import { PG_INSERT_LANES, PG_WRITE_BATCH, pgInsertNotifications } from './pg-message-writes.js'

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

interface PendingInsert {
  input: NewNotification
  now: number
  ring: StoreRing | undefined
}

/**
 * On PostgreSQL (`dialect === 'postgres'`) every write is one statement with the clock step and
 * the ring (pg-message-writes.ts); outside a transaction concurrent single inserts are combined.
 */
export function createNotificationRepository (db: Kysely<Database>, dialect: 'sqlite' | 'postgres' = 'sqlite'): NotificationRepository {
  const postgres = dialect === 'postgres'
  const combined = postgres && !db.isTransaction
    ? createWriteCombiner<PendingInsert, NotificationRecord>(
      (batch) => pgInsertNotifications(db, batch.map((p) => p.input), Math.max(...batch.map((p) => p.now)), batch[0]!.ring),
      { maxBatch: PG_WRITE_BATCH, canJoin: (batch, item) => batch[0]!.ring?.channel === item.ring?.channel, concurrency: PG_INSERT_LANES })
    : undefined
  return {
    async insert (n, now = Date.now(), ring) {
      if (combined !== undefined) return combined.write({ input: n, now, ring })
      if (postgres) return (await pgInsertNotifications(db, [n], now, ring))[0]!
      return inTransaction(db, async (trx) => {
        // The clock first: its row lock orders concurrent writers (R9). The stamp is the
        // timestamp, a client's kept only when the clock can take it (issue #23).
        const timestamp = await nextMessageTimestamp(trx, clockReading(n.timestamp, now))
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
      if (postgres) return pgInsertNotifications(db, list, now, ring)
      return inTransaction(db, async (trx) => {
        // One clock step for the batch: the stamps are last+1 .. last+n.
        const last = await nextMessageTimestamp(trx, batchClockReading(list, now), list.length)
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
