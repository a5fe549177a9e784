import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { CommandRecord, CommandRepository } from '../../core/commands/command-ports.js'
import { decodeBool, decodeJson, decodeNullableInt, encodeBool, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { applyPage } from '../paging.js'
import { clockReading } from '../../core/realtime/client-timestamp.js'
import { currentDeviceKey, inTransaction, messaging, nextMessageTimestamp, pruneMessages, selectorWhere } from './message-clock.js'
import type { MessageWrites } from './message-writes.js'

export interface CommandRow {
  id: number
  command: string
  device_id: string
  network_id: number
  device_type_id: number
  user_id: number | null
  parameters: string | null
  lifetime: number | null
  status: string | null
  result: string | null
  timestamp: number
  last_updated: number
  is_updated: number
  clock_ts: number | null
}

/**
 * A row as the core's record. `timestamp` is the row's stamp (`clock_ts`), the poll cursor: rows
 * stored before issue #23 may hold a client's timestamp in the column, and answering it would
 * make a client re-polling from it get the same item again. Before its first update a command's
 * `lastUpdated` is its timestamp.
 */
export function toCommandRecord (row: CommandRow): CommandRecord {
  const stamp = Number(row.clock_ts ?? row.timestamp)
  const isUpdated = decodeBool(row.is_updated)
  return {
    id: Number(row.id),
    command: row.command,
    deviceId: row.device_id,
    networkId: Number(row.network_id),
    deviceTypeId: Number(row.device_type_id),
    userId: row.user_id === null ? null : Number(row.user_id),
    parameters: decodeJson(row.parameters),
    lifetime: decodeNullableInt(row.lifetime),
    status: row.status,
    result: decodeJson(row.result),
    timestamp: stamp,
    lastUpdated: isUpdated ? Number(row.last_updated) : stamp,
    isUpdated,
    stamp
  }
}

/**
 * Inserts and updates go to the dialect's own `writes` when it has them (PostgreSQL: one
 * statement with the clock step and the ring, pg-message-writes.ts); otherwise they take the
 * clock row's lock in a transaction.
 */
export function createCommandRepository (db: Kysely<Database>, writes?: MessageWrites): CommandRepository {
  return {
    async insert (c, now, ring) {
      if (writes !== undefined) return writes.insertCommand(c, now, ring)
      return inTransaction(db, async (trx) => {
        // The clock first: its row lock orders concurrent writers (R9). The stamp is the
        // timestamp, a client's kept only when the clock can take it (issue #23).
        const timestamp = await nextMessageTimestamp(trx, clockReading(c.timestamp, now))
        const row = await messaging(trx).insertInto('commands').values({
          command: c.command,
          device_id: c.deviceId,
          network_id: c.networkId,
          device_type_id: c.deviceTypeId,
          user_id: c.userId,
          parameters: encodeJson(c.parameters),
          lifetime: c.lifetime,
          status: c.status,
          result: encodeJson(c.result),
          timestamp,
          last_updated: timestamp,
          is_updated: encodeBool(false),
          clock_ts: timestamp,
          stored_at: now,
          device_key: currentDeviceKey(c.deviceId)
        }).returningAll().executeTakeFirstOrThrow()
        return toCommandRecord(row)
      })
    },

    async update (deviceId, id, patch, now, ring) {
      if (writes !== undefined) return writes.updateCommand({ deviceId, id, patch }, now, ring)
      return inTransaction(db, async (trx) => {
        // One statement finds and updates the row. A miss (no such command for this device)
        // still takes a stamp: an unused stamp is a gap in the clock, which no cursor minds.
        const lastUpdated = await nextMessageTimestamp(trx, now)
        const row = await messaging(trx).updateTable('commands').set({
          ...(patch.status === undefined ? {} : { status: patch.status }),
          ...(patch.result === undefined ? {} : { result: encodeJson(patch.result) }),
          ...(patch.parameters === undefined ? {} : { parameters: patch.parameters === null ? null : encodeJson(patch.parameters) }),
          last_updated: lastUpdated,
          is_updated: encodeBool(true),
          stored_at: now
        }).where('id', '=', id).where('device_id', '=', deviceId).where('device_key', '=', currentDeviceKey(deviceId))
          .returningAll().executeTakeFirst()
        return row === undefined ? undefined : toCommandRecord(row)
      })
    },

    async findById (id) {
      const row = await messaging(db).selectFrom('commands').selectAll().where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toCommandRecord(row)
    },

    async findForDevice (deviceId, id) {
      const row = await messaging(db).selectFrom('commands').selectAll().where('id', '=', id).where('device_id', '=', deviceId)
        .where('device_key', '=', currentDeviceKey(deviceId)).executeTakeFirst()
      return row === undefined ? undefined : toCommandRecord(row)
    },

    async query (filter) {
      const names = filter.command === undefined ? undefined : [filter.command]
      let query = messaging(db).selectFrom('commands').selectAll().where(selectorWhere({ ...filter, names }, 'command'))
      // By the stamp, the timestamp every answer shows (toCommandRecord).
      if (filter.start !== undefined) query = query.where('clock_ts', '>=', filter.start)
      if (filter.end !== undefined) query = query.where('clock_ts', '<=', filter.end)
      if (filter.status !== undefined) query = query.where(sql`lower(status)`, '=', filter.status.toLowerCase())
      const order = filter.sortOrder === 'ASC' ? 'asc' : 'desc'
      // Nulls sort as empty strings (spec §6.2).
      if (filter.sortField === 'command') query = query.orderBy('command', order)
      else if (filter.sortField === 'status') query = query.orderBy(sql`coalesce(status, '')`, order)
      else query = query.orderBy('clock_ts', order)
      const rows = await applyPage(query.orderBy('id', order), filter).execute()
      return rows.map(toCommandRecord)
    },

    async prune (before, batch) {
      return pruneMessages(db, 'commands', before, batch)
    }
  }
}
