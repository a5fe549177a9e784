import type { Compilable, InsertObject, Kysely } from 'kysely'
import type { NewNotification, NotificationRecord, NotificationRepository } from '../../core/notifications/notification-ports.js'
import { notificationRecordOf } from '../../core/realtime/message-records.js'
import { applyPage } from '../paging.js'
import { decodeJson, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { batchClockReading, clockReading } from '../../core/realtime/client-timestamp.js'
import { clockStep, currentDeviceKey, messaging, pruneMessages, selectorWhere, stampOf, writeSteps } from './message-clock.js'
import type { MessagingDatabase } from './message-clock.js'
import type { MessageWrites } from './message-writes.js'
import type { QueryTemplates, SlotOf, TemplateSteps } from '../query-templates.js'
import { createQueryTemplates } from '../query-templates.js'

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

/** Values per row of a notification insert (see notificationValues). */
const INSERT_COLUMNS = 6
/**
 * The most rows per insert statement: one template per row count up to it (compiled once each,
 * within the statement cache's 256), so a batch takes one statement up to it.
 */
const MAX_CHUNK = 64

/**
 * One row of an insert, its values at `base` .. `base + INSERT_COLUMNS - 1` (the stamp twice, as
 * timestamp and clock_ts). No `stored_at`: notifications are pruned by stamp (migration 0018).
 */
function notificationValues (slot: SlotOf, base: number): InsertObject<MessagingDatabase, 'notifications'> {
  return {
    notification: slot(base),
    device_id: slot(base + 1),
    network_id: slot(base + 2),
    device_type_id: slot(base + 3),
    parameters: slot(base + 4),
    timestamp: slot(base + 5),
    clock_ts: slot(base + 5),
    device_key: currentDeviceKey(slot(base + 1))
  }
}

/**
 * Inserts go to the dialect's own `writes` when it has them (PostgreSQL: one statement with the
 * clock step and the ring, pg-message-writes.ts); otherwise they take the clock row's lock in a
 * transaction.
 */
export function createNotificationRepository (
  db: Kysely<Database>, writes?: MessageWrites, templates: QueryTemplates = createQueryTemplates()
): NotificationRepository {
  /**
   * Rows `start .. start+size-1` of `list` in one statement, stamped from `first`. The records are
   * built from the input (only the ids come back): reading every column back and parsing the
   * parameters again cost more than the insert itself (issue #26).
   */
  function * insertChunk (list: readonly NewNotification[], start: number, size: number,
    first: number): TemplateSteps<NotificationRecord[]> {
    const values: unknown[] = []
    for (let i = start; i < start + size; i++) {
      const n = list[i]!
      values.push(n.notification, n.deviceId, n.networkId, n.deviceTypeId, encodeJson(n.parameters), first + i)
    }
    // `or fail`: SQLite keeps a statement journal (a copy of every page the statement changes,
    // spilled to a temporary file) for a multi-row insert that may abort, so that an abort can undo
    // the statement alone. A failed batch here rolls back its whole transaction, so the journal is
    // never used. Without it, a 100-row batch of the bench's rows cost 14 instead of 23 µs of CPU
    // per row (no page copies, no temporary file writes).
    // This path is SQLite's: PostgreSQL writes through its own `writes`.
    const build = (slot: SlotOf): Compilable<{ id: number }> => messaging(db).insertInto('notifications').orFail()
      .values(Array.from({ length: size }, (_, row) => notificationValues(slot, row * INSERT_COLUMNS))).returning('id')
    const rows = (yield { key: `notification-insert-${size}`, build, values }) as Array<{ id: number }>
    // Identity values follow the VALUES order; RETURNING order is not promised.
    const ids = rows.map((row) => Number(row.id)).sort((a, b) => a - b)
    return ids.map((id, k) => notificationRecordOf(list[start + k]!, id, first + start + k))
  }

  return {
    async insert (n, now = Date.now(), ring) {
      if (writes !== undefined) return writes.insertNotification(n, now, ring)
      return writeSteps(db, templates, function * () {
        // The clock first: its row lock orders concurrent writers (R9). The stamp is the
        // timestamp, a client's kept only when the clock can take it (issue #23).
        const timestamp = stampOf(yield clockStep(db, clockReading(n.timestamp, now)))
        const [record] = yield * insertChunk([n], 0, 1, timestamp)
        return record!
      })
    },

    async insertMany (list, now, ring) {
      if (list.length === 0) return []
      if (writes !== undefined) return writes.insertNotifications(list, now, ring)
      return writeSteps(db, templates, function * () {
        // One clock step for the batch: the stamps are last+1 .. last+n.
        const last = stampOf(yield clockStep(db, batchClockReading(list, now), list.length))
        const first = last - list.length + 1
        const records: NotificationRecord[] = []
        for (let start = 0; start < list.length;) {
          const size = Math.min(MAX_CHUNK, list.length - start)
          records.push(...yield * insertChunk(list, start, size, first))
          start += size
        }
        return records
      })
    },

    async findById (id) {
      const row = await messaging(db).selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toNotificationRecord(row)
    },

    async findForDevice (deviceId, id) {
      const row = await messaging(db).selectFrom('notifications').selectAll().where('id', '=', id)
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
