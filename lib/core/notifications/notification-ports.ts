import type { JsonObject } from '../ports.js'

export interface NotificationRecord {
  id: number
  notification: string
  deviceId: string
  /** Null only for rows imported from DeviceHive; devicehub fills both (R3). */
  networkId: number | null
  deviceTypeId: number | null
  timestamp: number
  parameters: JsonObject | null
}

export interface NewNotification {
  notification: string
  deviceId: string
  networkId: number | null
  deviceTypeId: number | null
  parameters: JsonObject | null
  /** Client-given timestamp (epoch ms); the server assigns one when absent. */
  timestamp?: number
}

// The messaging issue grows this interface (queries, poll reads, retention).
export interface NotificationRepository {
  insert(notification: NewNotification): Promise<NotificationRecord>
}
