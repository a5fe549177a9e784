import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { CommandRecord, CommandRepository, NewCommand, StoreRing } from '../../core/commands/command-ports.js'
import { decodeBool, decodeJson, decodeNullableInt, encodeBool, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { applyPage } from '../paging.js'
import { createWriteCombiner } from '../../core/write-combiner.js'
import { clockReading } from '../../core/realtime/client-timestamp.js'
import { currentDeviceKey, inTransaction, messaging, nextMessageTimestamp, pruneMessages, selectorWhere } from './message-clock.js'
import type { CommandUpdate } from './pg-message-writes.js'
import { PG_INSERT_LANES, PG_WRITE_BATCH, pgInsertCommands, pgUpdateCommands } from './pg-message-writes.js'


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

interface Pending<T> {
  value: T
  now: number
  ring: StoreRing | undefined
}

const sameRing = <T>(batch: ReadonlyArray<Pending<T>>, item: Pending<T>): boolean => batch[0]!.ring?.channel === item.ring?.channel
const latest = <T>(batch: ReadonlyArray<Pending<T>>): number => Math.max(...batch.map((p) => p.now))

/**
 * On PostgreSQL (`dialect === 'postgres'`) every write is one statement with the clock step and
 * the ring (pg-message-writes.ts); outside a transaction concurrent writes are combined.
 */
export function createCommandRepository (db: Kysely<Database>, dialect: 'sqlite' | 'postgres' = 'sqlite'): CommandRepository {
  const postgres = dialect === 'postgres'
  const combine = postgres && !db.isTransaction
  const inserts = combine
    ? createWriteCombiner<Pending<NewCommand>, CommandRecord>(
      (batch) => pgInsertCommands(db, batch.map((p) => p.value), latest(batch), batch[0]!.ring),
      { maxBatch: PG_WRITE_BATCH, canJoin: sameRing, concurrency: PG_INSERT_LANES })
    : undefined
  const updates = combine
    ? createWriteCombiner<Pending<CommandUpdate>, CommandRecord | undefined>(
      (batch) => pgUpdateCommands(db, batch.map((p) => p.value), latest(batch), batch[0]!.ring),
      // One statement updates a row once: a second update of the same command waits for the next batch.
      { maxBatch: PG_WRITE_BATCH, canJoin: (batch, item) => sameRing(batch, item) && !batch.some((p) => p.value.id === item.value.id) })
    : undefined
  return {
    async insert (c, now, ring) {
      if (inserts !== undefined) return inserts.write({ value: c, now, ring })
      if (postgres) return (await pgInsertCommands(db, [c], now, ring))[0]!
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
      if (updates !== undefined) return updates.write({ value: { deviceId, id, patch }, now, ring })
      if (postgres) return (await pgUpdateCommands(db, [{ deviceId, id, patch }], now, ring))[0]
      return inTransaction(db, async (trx) => {
        const existing = await trx.selectFrom('commands').select('id').where('id', '=', id).where('device_id', '=', deviceId)
          .where('device_key', '=', currentDeviceKey(deviceId)).executeTakeFirst()
        if (existing === undefined) return undefined
        const lastUpdated = await nextMessageTimestamp(trx, now)
        const row = await messaging(trx).updateTable('commands').set({
          ...(patch.status === undefined ? {} : { status: patch.status }),
          ...(patch.result === undefined ? {} : { result: encodeJson(patch.result) }),
          last_updated: lastUpdated,
          is_updated: encodeBool(true),
          stored_at: now
        }).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
        return toCommandRecord(row)
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
