import type { Kysely } from 'kysely'
import type { NotificationRecord, NotificationRepository } from '../../core/notifications/notification-ports.js'
import { applyPage } from '../paging.js'
import { decodeJson, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { inTransaction, messaging, nextMessageTimestamp, pruneMessages, readHighWater, selectorWhere } from './message-clock.js'

export function toNotificationRecord (row: { id: number, notification: string, device_id: string, network_id: number | null, device_type_id: number | null, timestamp: number, parameters: string | null }): NotificationRecord {
  return {
    id: Number(row.id),
    notification: row.notification,
    deviceId: row.device_id,
    networkId: row.network_id === null ? null : Number(row.network_id),
    deviceTypeId: row.device_type_id === null ? null : Number(row.device_type_id),
    timestamp: Number(row.timestamp),
    parameters: decodeJson(row.parameters)
  }
}

export function createNotificationRepository (db: Kysely<Database>): NotificationRepository {
  return {
    async insert (n, now = Date.now()) {
      return inTransaction(db, async (trx) => {
        // The clock first: its row lock orders concurrent writers (R9).
        const assigned = await nextMessageTimestamp(trx, now)
        const row = await messaging(trx).insertInto('notifications').values({
          notification: n.notification,
          device_id: n.deviceId,
          network_id: n.networkId,
          device_type_id: n.deviceTypeId,
          parameters: encodeJson(n.parameters),
          timestamp: n.timestamp ?? assigned,
          stored_at: now
        }).returningAll().executeTakeFirstOrThrow()
        return toNotificationRecord(row)
      })
    },

    async insertMany (list, now) {
      if (list.length === 0) return []
      return inTransaction(db, async (trx) => {
        // One clock step for the batch: the server-assigned stamps are last+1 .. last+n.
        const assigned = list.filter((n) => n.timestamp === undefined).length
        const last = assigned === 0 ? 0 : await nextMessageTimestamp(trx, now, assigned)
        let next = last - assigned
        const rows = await messaging(trx).insertInto('notifications').values(list.map((n) => ({
          notification: n.notification,
          device_id: n.deviceId,
          network_id: n.networkId,
          device_type_id: n.deviceTypeId,
          parameters: encodeJson(n.parameters),
          timestamp: n.timestamp ?? ++next,
          stored_at: now
        }))).returningAll().execute()
        // Identity values follow the VALUES order; RETURNING order is not promised.
        return rows.map(toNotificationRecord).sort((a, b) => a.id - b.id)
      })
    },

    async findById (id) {
      const row = await db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toNotificationRecord(row)
    },

    async query (filter) {
      const names = filter.notification === undefined ? undefined : [filter.notification]
      let query = db.selectFrom('notifications').selectAll()
        .where(selectorWhere({ ...filter, names }, 'notification', { excludeSystem: false }))
      if (filter.start !== undefined) query = query.where('timestamp', '>=', filter.start)
      if (filter.end !== undefined) query = query.where('timestamp', '<=', filter.end)
      const order = filter.sortOrder === 'ASC' ? 'asc' : 'desc'
      query = filter.sortField === 'notification' ? query.orderBy('notification', order) : query.orderBy('timestamp', order)
      const rows = await applyPage(query.orderBy('id', order), filter).execute()
      return rows.map(toNotificationRecord)
    },

    async backlog (q) {
      if (q.limit <= 0) return []
      const rows = await db.selectFrom('notifications').selectAll()
        .where(selectorWhere(q, 'notification'))
        .where('timestamp', '>', q.after)
        .orderBy('timestamp', 'asc').orderBy('id', 'asc')
        .limit(q.limit)
        .execute()
      return rows.map(toNotificationRecord)
    },

    async highWater () {
      return readHighWater(db, 'notifications')
    },

    async prune (before, batch) {
      return pruneMessages(db, 'notifications', before, batch)
    }
  }
}
