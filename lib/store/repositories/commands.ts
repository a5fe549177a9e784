import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { CommandRecord, CommandRepository, CommandUpdate, NewCommand } from '../../core/commands/command-ports.js'
import { commandRecordOf } from '../../core/realtime/message-records.js'
import { decodeBool, decodeJson, decodeNullableInt, encodeBool, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { applyPage } from '../paging.js'
import { createQueryTemplates } from '../query-templates.js'
import { clockReading } from '../../core/realtime/client-timestamp.js'
import { clockStep, currentDeviceKey, messaging, pruneMessages, selectorWhere, stampOf, writeSteps } from './message-clock.js'
import type { MessageWrites } from './message-writes.js'
import type { QueryTemplates, TemplateSteps } from '../query-templates.js'

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

/** A command insert's statements (message-clock.ts `writeSteps`): the clock step, then the row. */
function * insertSteps (db: Kysely<Database>, c: NewCommand, now: number): TemplateSteps<CommandRecord> {
  // The clock first: its row lock orders concurrent writers (R9). The stamp is the timestamp, a
  // client's kept only when the clock can take it (issue #23).
  const timestamp = stampOf(yield clockStep(db, clockReading(c.timestamp, now)))
  const [row] = (yield {
    key: 'command-insert',
    build: (slot) => messaging(db).insertInto('commands').values({
      command: slot(0),
      device_id: slot(1),
      network_id: slot(2),
      device_type_id: slot(3),
      user_id: slot(4),
      parameters: slot(5),
      lifetime: slot(6),
      status: slot(7),
      result: slot(8),
      timestamp: slot(9),
      last_updated: slot(9),
      is_updated: slot(10),
      clock_ts: slot(9),
      // No `stored_at`: commands are pruned by `last_updated` (migration 0018).
      device_key: currentDeviceKey(slot(1))
    }).returning('id'),
    values: [c.command, c.deviceId, c.networkId, c.deviceTypeId, c.userId, encodeJson(c.parameters), c.lifetime, c.status,
      encodeJson(c.result), timestamp, encodeBool(false)]
  }) as Array<{ id: number }>
  if (row === undefined) throw new Error('a command insert returned no row')
  // Built from the input: reading every column back and decoding its JSON again cost more.
  return commandRecordOf(c, Number(row.id), timestamp)
}

/** A command update's statements: the clock step, then the row; undefined when there is no such command. */
function * updateSteps (db: Kysely<Database>, u: CommandUpdate, now: number): TemplateSteps<CommandRecord | undefined> {
  // One statement finds and updates the row. A miss (no such command for this device) still
  // takes a stamp: an unused stamp is a gap in the clock, which no cursor minds.
  const lastUpdated = stampOf(yield clockStep(db, now))
  const { patch } = u
  const status = patch.status !== undefined
  const result = patch.result !== undefined
  const parameters = patch.parameters !== undefined
  const encodedParameters = patch.parameters === undefined || patch.parameters === null ? null : encodeJson(patch.parameters)
  const [row] = (yield {
    // One template per shape of the patch.
    key: `command-update:${Number(status)}${Number(result)}${Number(parameters)}`,
    build: (slot) => messaging(db).updateTable('commands').set({
      ...(status ? { status: slot(0) } : {}),
      ...(result ? { result: slot(1) } : {}),
      ...(parameters ? { parameters: slot(2) } : {}),
      last_updated: slot(3),
      is_updated: slot(4),
      // Out of the partial index of rows stored before migration 0018: pruned by `last_updated` now.
      stored_at: sql<null>`null`
    }).where('id', '=', slot(5)).where('device_key', '=', currentDeviceKey(slot(6)))
      .returningAll(),
    values: [
      patch.status, result ? encodeJson(patch.result) : undefined, encodedParameters, lastUpdated, encodeBool(true), u.id, u.deviceId
    ]
  }) as CommandRow[]
  return row === undefined ? undefined : toCommandRecord(row)
}

/**
 * Inserts and updates go to the dialect's own `writes` when it has them (PostgreSQL: one
 * statement with the clock step and the ring, pg-message-writes.ts); otherwise they take the
 * clock row's lock in a transaction.
 */
export function createCommandRepository (
  db: Kysely<Database>, writes?: MessageWrites, templates: QueryTemplates = createQueryTemplates()
): CommandRepository {
  return {
    async insert (c, now, ring) {
      if (writes !== undefined) return writes.insertCommand(c, now, ring)
      return writeSteps(db, templates, () => insertSteps(db, c, now))
    },

    async update (deviceId, id, patch, now, ring) {
      if (writes !== undefined) return writes.updateCommand({ deviceId, id, patch }, now, ring)
      return writeSteps(db, templates, () => updateSteps(db, { deviceId, id, patch }, now))
    },

    async writeMany (batch, now) {
      const records: Array<CommandRecord | undefined> = []
      if (writes === undefined) {
        // One transaction, each write with its own clock step, in order: on SQLite one
        // synchronous call (QueryTemplates.transact), no transaction object or promise per write.
        return writeSteps(db, templates, function * () {
          for (const w of batch) records.push(yield * (w.kind === 'command' ? insertSteps(db, w.input, now) : updateSteps(db, w, now)))
          return records
        })
      }
      // The dialect's writes are one statement each; in a transaction of the caller's they share its commit.
      for (const w of batch) {
        records.push(await (w.kind === 'command' ? writes.insertCommand(w.input, now, undefined) : writes.updateCommand(w, now, undefined)))
      }
      return records
    },

    async findById (id) {
      const [row] = await templates.run(
        db, 'command-by-id', (slot) => messaging(db).selectFrom('commands').selectAll().where('id', '=', slot(0)), [id]
      )
      return row === undefined ? undefined : toCommandRecord(row)
    },

    async findForDevice (deviceId, id) {
      const [row] = await templates.run(db, 'command-for-device', (slot) => messaging(db).selectFrom('commands').selectAll()
        .where('id', '=', slot(0)).where('device_key', '=', currentDeviceKey(slot(1))), [id, deviceId])
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
