import type { StoreRing } from '../realtime/store-ring.js'
import type { Page } from '../values.js'
import type { MessageScope } from '../realtime/message-filter.js'
import type { NewNotification, NotificationRecord } from '../realtime/message-records.js'

export type { NewNotification, NotificationRecord } from '../realtime/message-records.js'

export interface NotificationQuery extends Page, MessageScope {
  start?: number
  end?: number
  notification?: string
  sortField: 'timestamp' | 'notification'
}

export interface NotificationRepository {
  /**
   * Inserts in one transaction with the message clock: the row's timestamp is
   * `max(last + 1, reading)` (the reading is `now` or a kept client timestamp,
   * client-timestamp.ts), so timestamps strictly increase in commit order (R9, issue #23).
   */
  insert(notification: NewNotification, now?: number, ring?: StoreRing): Promise<NotificationRecord>
  /**
   * Several inserts in one statement and one clock step; records in the order given. Called in a
   * transaction of the caller's, a failed call leaves that transaction to be rolled back: on
   * SQLite the rows before the failing one stay written until then (the insert keeps no
   * statement journal, see repositories/notifications.ts).
   */
  insertMany(notifications: readonly NewNotification[], now: number, ring?: StoreRing): Promise<NotificationRecord[]>
  findById(id: number): Promise<NotificationRecord | undefined>
  /** The notification `id` of the device that now has `deviceId` (never an earlier device's). */
  findForDevice(deviceId: string, id: number): Promise<NotificationRecord | undefined>
  query(filter: NotificationQuery): Promise<NotificationRecord[]>
  prune(before: number, batch: number): Promise<number>
}
