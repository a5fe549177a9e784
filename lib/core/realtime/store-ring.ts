/**
 * The seam between the message log and a store whose write statements send their own bus events
 * (PostgreSQL: `pg_notify` in the statement). Apart from bus.ts so the ports of both kinds can
 * name it without importing the bus (which imports the store's port).
 */
import type { CommandRecord, NotificationRecord } from './message-records.js'

/**
 * One link of the stamp draw chain: the stamp drawn just before this item's (`prev`), the item's
 * own stamp (`stamp`: its insert stamp, or `lastUpdated` for an update), and `nextXid`, a
 * transaction id above that of every writer that drew before (taken under the draw's mutex). Once no transaction below `nextXid`
 * is running, every earlier stamp is committed or never will be.
 */
export interface DrawLink {
  prev: number
  stamp: number
  nextXid: number
}

/**
 * Ring the bus from the write statement itself: each written row's bus event is sent
 * (PostgreSQL `pg_notify`) on `channel` by the same statement, so it fires exactly at commit
 * with no extra round trip. The message log passes it where its ordering rides the statement
 * (log-ordering.ts); a store without NOTIFY ignores it.
 *
 * @example
 * const ring: StoreRing = { channel: 'devicehub_events', drawn: (record, link) => links.set(record, link) }
 * await store.notifications.insert(input, Date.now(), ring)
 */
export interface StoreRing {
  channel: string
  /**
   * Told, once the statement answered, where each row it wrote stands in the stamp draw: the
   * writer orders its own events from this (its bus skips their NOTIFYs) instead of parsing them
   * back. Called before the statement's transaction commits when it runs inside one.
   */
  drawn(record: NotificationRecord | CommandRecord, link: DrawLink): void
}
