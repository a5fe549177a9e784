import type { Kysely } from 'kysely'
import type { DeviceRecord, DeviceRepository } from '../../core/devices/device-ports.js'
import { decodeBool, decodeJson, encodeBool, encodeJson } from '../codec.js'
import type { Database } from '../database.js'

export function toDeviceRecord (row: { device_id: string, name: string, data: string | null, network_id: number, device_type_id: number, is_blocked: number }): DeviceRecord {
  return {
    id: row.device_id,
    name: row.name,
    data: decodeJson(row.data),
    networkId: Number(row.network_id),
    deviceTypeId: Number(row.device_type_id),
    isBlocked: decodeBool(row.is_blocked)
  }
}

export function createDeviceRepository (db: Kysely<Database>): DeviceRepository {
  return {
    async findById (id) {
      const row = await db.selectFrom('devices').selectAll().where('device_id', '=', id).executeTakeFirst()
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
    }
  }
}
