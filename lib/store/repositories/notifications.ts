import type { Kysely } from 'kysely'
import type { NotificationRecord, NotificationRepository } from '../../core/notifications/notification-ports.js'
import { decodeJson, encodeJson } from '../codec.js'
import type { Database } from '../database.js'

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
    async insert (n) {
      const row = await db.insertInto('notifications').values({
        notification: n.notification,
        device_id: n.deviceId,
        network_id: n.networkId,
        device_type_id: n.deviceTypeId,
        parameters: encodeJson(n.parameters),
        timestamp: n.timestamp ?? Date.now()
      }).returningAll().executeTakeFirstOrThrow()
      return toNotificationRecord(row)
    }
  }
}
