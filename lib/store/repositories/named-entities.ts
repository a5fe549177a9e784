/** Networks and device types have the same shape and rules; one repository serves both tables. */
import type { Kysely, SelectQueryBuilder } from 'kysely'
import type { NetworkFilter, NetworkRecord, NetworkRepository } from '../../core/networks/network-ports.js'
import type { Database } from '../database.js'
import { applyPage } from '../paging.js'
import { inTransaction } from './message-clock.js'
import { queuePurge } from './purges.js'

type Table = 'networks' | 'device_types'

function toRecord (row: { id: number, name: string, description: string | null }): NetworkRecord {
  return { id: Number(row.id), name: row.name, description: row.description }
}

export function createNamedEntityRepository (db: Kysely<Database>, table: Table): NetworkRepository {
  function filtered<O> (
    query: SelectQueryBuilder<Database, Table, O>, ids: 'all' | readonly number[], filter: NetworkFilter
  ): SelectQueryBuilder<Database, Table, O> {
    if (ids !== 'all') query = query.where('id', 'in', ids.length === 0 ? [-1] : [...ids])
    if (filter.name !== undefined) query = query.where('name', '=', filter.name)
    if (filter.namePattern !== undefined) query = query.where('name', 'like', filter.namePattern)
    return query
  }
  return {
    async findById (id) {
      const row = await db.selectFrom(table).select(['id', 'name', 'description']).where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toRecord(row)
    },
    async findByName (name) {
      const row = await db.selectFrom(table).select(['id', 'name', 'description']).where('name', '=', name).executeTakeFirst()
      return row === undefined ? undefined : toRecord(row)
    },
    async insert (entity) {
      const row = await db.insertInto(table)
        .values({ name: entity.name, description: entity.description })
        .returning('id')
        .executeTakeFirstOrThrow()
      return Number(row.id)
    },
    async update (id, patch) {
      const values: { name?: string, description?: string | null } = {}
      if (patch.name !== undefined) values.name = patch.name
      if (patch.description !== undefined) values.description = patch.description
      const result = await db.updateTable(table)
        .set((eb) => ({ ...values, entity_version: eb('entity_version', '+', 1) }))
        .where('id', '=', id).executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    async delete (id) {
      return inTransaction(db, async (trx) => {
        // Its devices go by ON DELETE CASCADE: their histories are queued first.
        await queuePurge(trx, (eb) => eb(table === 'networks' ? 'network_id' : 'device_type_id', '=', id))
        const result = await trx.deleteFrom(table).where('id', '=', id).executeTakeFirst()
        return result.numDeletedRows > 0n
      })
    },
    async list (ids, filter) {
      const order = filter.sortOrder === 'DESC' ? 'desc' : 'asc'
      let query = filtered(db.selectFrom(table).select(['id', 'name', 'description']), ids, filter)
      query = filter.sortField === 'name'
        ? query.orderBy('name', order).orderBy('id', 'asc')
        : query.orderBy('id', filter.sortField === 'id' ? order : 'asc')
      return (await applyPage(query, filter).execute()).map(toRecord)
    },
    async count (ids, filter) {
      const row = await filtered(
        db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('count')), ids, filter
      ).executeTakeFirstOrThrow()
      return Number(row.count)
    }
  }
}
