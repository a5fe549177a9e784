import type { HighWater, StoreRing } from '../commands/command-ports.js'
import type { Page } from '../values.js'
import type { MessageScope, MessageSelector } from '../realtime/message-filter.js'
import type { NewNotification, NotificationRecord } from '../realtime/message-records.js'

export type { NewNotification, NotificationRecord } from '../realtime/message-records.js'

export interface NotificationQuery extends Page, MessageScope {
  start?: number
  end?: number
  notification?: string
  sortField: 'timestamp' | 'notification'
}

export interface NotificationBacklogQuery extends MessageSelector {
  /** Items whose `stamp` is strictly after this. */
  after: number
  /** And at or below this stamp (a doorbell's mark, where commits land out of stamp order). */
  upTo?: number
  limit: number
}

export interface NotificationRepository {
  /**
   * Inserts in one transaction with the message clock: the row's timestamp is
   * `max(last + 1, reading)` (the reading is `now` or a kept client timestamp,
   * client-timestamp.ts), so timestamps strictly increase in commit order (R9, issue #23).
   */
  insert(notification: NewNotification, now?: number, ring?: StoreRing): Promise<NotificationRecord>
  /** Several inserts in one statement and one clock step; records in the order given. */
  insertMany(notifications: readonly NewNotification[], now: number, ring?: StoreRing): Promise<NotificationRecord[]>
  findById(id: number): Promise<NotificationRecord | undefined>
  /** The notification `id` of the device that now has `deviceId` (never an earlier device's). */
  findForDevice(deviceId: string, id: number): Promise<NotificationRecord | undefined>
  query(filter: NotificationQuery): Promise<NotificationRecord[]>
  backlog(query: NotificationBacklogQuery): Promise<NotificationRecord[]>
  highWater(): Promise<HighWater>
  prune(before: number, batch: number): Promise<number>
}
