import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { CommandRecord, CommandRepository } from '../../core/commands/command-ports.js'
import { decodeBool, decodeJson, encodeBool, encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { applyPage } from '../paging.js'
import { inTransaction, messaging, nextMessageTimestamp, pruneMessages, readHighWater, selectorWhere } from './message-clock.js'

interface CommandRow {
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
}

export function toCommandRecord (row: CommandRow): CommandRecord {
  return {
    id: Number(row.id),
    command: row.command,
    deviceId: row.device_id,
    networkId: Number(row.network_id),
    deviceTypeId: Number(row.device_type_id),
    userId: row.user_id === null ? null : Number(row.user_id),
    parameters: decodeJson(row.parameters),
    lifetime: row.lifetime === null ? null : Number(row.lifetime),
    status: row.status,
    result: decodeJson(row.result),
    timestamp: Number(row.timestamp),
    lastUpdated: Number(row.last_updated),
    isUpdated: decodeBool(row.is_updated)
  }
}

export function createCommandRepository (db: Kysely<Database>): CommandRepository {
  return {
    async insert (c, now) {
      return inTransaction(db, async (trx) => {
        // The clock first: its row lock orders concurrent writers (R9).
        const assigned = await nextMessageTimestamp(trx, now)
        const timestamp = c.timestamp ?? assigned
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
          stored_at: now
        }).returningAll().executeTakeFirstOrThrow()
        return toCommandRecord(row)
      })
    },

    async update (deviceId, id, patch, now) {
      return inTransaction(db, async (trx) => {
        const existing = await trx.selectFrom('commands').select('id').where('id', '=', id).where('device_id', '=', deviceId).executeTakeFirst()
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
      const row = await db.selectFrom('commands').selectAll().where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toCommandRecord(row)
    },

    async query (filter) {
      const names = filter.command === undefined ? undefined : [filter.command]
      let query = db.selectFrom('commands').selectAll().where(selectorWhere({ ...filter, names }, 'command'))
      if (filter.start !== undefined) query = query.where('timestamp', '>=', filter.start)
      if (filter.end !== undefined) query = query.where('timestamp', '<=', filter.end)
      if (filter.status !== undefined) query = query.where(sql`lower(status)`, '=', filter.status.toLowerCase())
      const order = filter.sortOrder === 'ASC' ? 'asc' : 'desc'
      // Nulls sort as empty strings (spec §6.2).
      if (filter.sortField === 'command') query = query.orderBy('command', order)
      else if (filter.sortField === 'status') query = query.orderBy(sql`coalesce(status, '')`, order)
      else query = query.orderBy('timestamp', order)
      const rows = await applyPage(query.orderBy('id', order), filter).execute()
      return rows.map(toCommandRecord)
    },

    async backlog (q) {
      if (q.limit <= 0) return []
      const column = q.updated ? 'last_updated' : 'timestamp'
      let query = db.selectFrom('commands').selectAll()
        .where(selectorWhere(q, 'command'))
        .where(column, '>', q.after)
      if (q.updated) query = query.where('is_updated', '=', encodeBool(true))
      else {
        // R7: an expired, never-updated command is not handed out.
        query = query.where((eb) => eb.or([
          eb('lifetime', 'is', null),
          eb('is_updated', '=', encodeBool(true)),
          eb(sql<number>`timestamp + lifetime * 1000`, '>=', q.now)
        ]))
      }
      const rows = await query.orderBy(column, 'asc').orderBy('id', 'asc').limit(q.limit).execute()
      return rows.map(toCommandRecord)
    },

    async highWater () {
      return readHighWater(db, 'commands')
    },

    async prune (before, batch) {
      return pruneMessages(db, 'commands', before, batch)
    }
  }
}
