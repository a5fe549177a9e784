import type { ExpressionBuilder, Kysely, SelectQueryBuilder, Updateable } from 'kysely'
import { sql } from 'kysely'
import type { DeviceFilter, DevicePatch, DeviceRecord, DeviceRepository } from '../../core/devices/device-ports.js'
import type { DataScope } from '../../core/ports.js'
import { containsPattern, decodeBool, decodeJson, encodeBool, encodeJson } from '../codec.js'
import type { Database, DevicesTable } from '../database.js'
import { applyPage } from '../paging.js'
import type { QueryTemplates } from '../query-templates.js'
import { createQueryTemplates } from '../query-templates.js'
import { inTransaction } from './message-clock.js'
import { queuePurge } from './purges.js'

export function toDeviceRecord (row: {
  device_id: string, name: string, data: string | null, network_id: number, device_type_id: number, is_blocked: number
}): DeviceRecord {
  return {
    id: row.device_id,
    name: row.name,
    data: decodeJson(row.data),
    networkId: Number(row.network_id),
    deviceTypeId: Number(row.device_type_id),
    isBlocked: decodeBool(row.is_blocked)
  }
}

function toRow (patch: DevicePatch): Updateable<DevicesTable> {
  const row: Updateable<DevicesTable> = {}
  if (patch.name !== undefined) row.name = patch.name
  if (patch.data !== undefined) row.data = encodeJson(patch.data)
  if (patch.networkId !== undefined) row.network_id = patch.networkId
  if (patch.deviceTypeId !== undefined) row.device_type_id = patch.deviceTypeId
  if (patch.isBlocked !== undefined) row.is_blocked = encodeBool(patch.isBlocked)
  return row
}

function filtered<O> (
  query: SelectQueryBuilder<Database, 'devices', O>, scope: DataScope, filter: DeviceFilter
): SelectQueryBuilder<Database, 'devices', O> {
  // An empty id list matches nothing; -1 is never an id.
  if (scope.networkIds !== 'all') query = query.where('network_id', 'in', scope.networkIds.length === 0 ? [-1] : [...scope.networkIds])
  if (scope.deviceTypeIds !== 'all') {
    query = query.where('device_type_id', 'in', scope.deviceTypeIds.length === 0 ? [-1] : [...scope.deviceTypeIds])
  }
  if (filter.name !== undefined) query = query.where('name', '=', filter.name)
  if (filter.namePattern !== undefined) query = query.where('name', 'like', filter.namePattern)
  if (filter.search !== undefined) {
    // The database's lower() on both sides: case-insensitive on SQLite (case_sensitive_like is on)
    // and PostgreSQL alike, and a text always finds itself whatever letters it holds.
    const pattern = sql`lower(${containsPattern(filter.search)})`
    query = query.where(sql<boolean>`(lower(name) like ${pattern} escape '\\' or lower(device_id) like ${pattern} escape '\\')`)
  }
  if (filter.networkId !== undefined) query = query.where('network_id', '=', filter.networkId)
  if (filter.deviceTypeId !== undefined) query = query.where('device_type_id', '=', filter.deviceTypeId)
  const networkName = filter.networkName
  if (networkName !== undefined) {
    query = query.where('network_id', 'in', (eb) =>
      eb.selectFrom('networks').select('networks.id').where('networks.name', '=', networkName))
  }
  const deviceTypeName = filter.deviceTypeName
  if (deviceTypeName !== undefined) {
    query = query.where('device_type_id', 'in', (eb) =>
      eb.selectFrom('device_types').select('device_types.id').where('device_types.name', '=', deviceTypeName))
  }
  const presence = filter.presence
  if (presence !== undefined) {
    const fresh = (eb: ExpressionBuilder<Database, 'devices'>) => eb.selectFrom('device_presence').select('device_presence.device_id')
      .where('device_presence.last_seen', '>=', presence.since)
    query = query.where('device_id', presence.online ? 'in' : 'not in', fresh)
  }
  return query
}

const SORT_COLUMNS = { id: 'id', name: 'name', networkId: 'network_id', deviceTypeId: 'device_type_id' } as const

export function createDeviceRepository (db: Kysely<Database>, templates: QueryTemplates = createQueryTemplates()): DeviceRepository {
  return {
    // Every request of a device path reads it (through the store's read cache): a template.
    async findById (id) {
      const [row] = await templates.run(db, 'device-by-id', (slot) => db.selectFrom('devices').selectAll()
        .where('device_id', '=', slot(0)), [id])
      return row === undefined ? undefined : toDeviceRecord(row)
    },
    async insert (device) {
      await db.insertInto('devices').values({
        device_id: device.id,
        name: device.name,
        data: encodeJson(device.data),
        network_id: device.networkId,
        device_type_id: device.deviceTypeId,
        is_blocked: encodeBool(device.isBlocked)
      }).execute()
    },
    async update (id, patch) {
      const values = toRow(patch)
      if (Object.keys(values).length === 0) {
        return (await db.selectFrom('devices').select('id').where('device_id', '=', id).executeTakeFirst()) !== undefined
      }
      const result = await db.updateTable('devices').set(values).where('device_id', '=', id).executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    async delete (id) {
      return inTransaction(db, async (trx) => {
        await queuePurge(trx, (eb) => eb('device_id', '=', id))
        const result = await trx.deleteFrom('devices').where('device_id', '=', id).executeTakeFirst()
        return result.numDeletedRows > 0n
      })
    },
    async list (scope, filter) {
      const order = filter.sortOrder === 'DESC' ? 'desc' : 'asc'
      let query = filtered(db.selectFrom('devices').selectAll(), scope, filter)
      const column = SORT_COLUMNS[filter.sortField ?? 'id']
      // The internal key is creation order: the tiebreak that keeps pages stable.
      query = column === 'id'
        ? query.orderBy('id', filter.sortField === undefined ? 'asc' : order)
        : query.orderBy(column, order).orderBy('id', 'asc')
      return (await applyPage(query, filter).execute()).map(toDeviceRecord)
    },
    async count (scope, filter) {
      const row = await filtered(
        db.selectFrom('devices').select((eb) => eb.fn.countAll<number>().as('count')), scope, filter
      ).executeTakeFirstOrThrow()
      return Number(row.count)
    }
  }
}
