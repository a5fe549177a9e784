/**
 * The doorbell seam: a doorbell, not a message bus. Events carry ids and routing keys, and may
 * carry the written record as a hint (`record`) that saves every woken waiter's read; without
 * it a waiter reads the store. Any doorbell is interchangeable, one that drops records costs a
 * read, and a lost doorbell costs latency, never data: the store stays the truth (backlogs and
 * resyncs read it).
 */
import type { CommandRecord } from '../commands/command-ports.js'
import type { NotificationRecord } from '../notifications/notification-ports.js'
import type { Store } from '../ports.js'

/**
 * `resync` carries no item: the doorbell may have missed doorbells (e.g. a database doorbell lost and
 * re-established its connection), so every waiter must read the store again whatever it
 * waits for. Its `id` is 0, `deviceId` and `name` are '' and the routing ids are null.
 *
 * `plugin` says a plugin's status or filter changed, or it was deleted: `id` is the plugin id,
 * `name` its topic, `deviceId` '' and the routing ids null. Message waiters ignore it.
 *
 * `revoke` says a user lost rights (role lowered, status leaving ACTIVE, deletion, a network or
 * device type it had unassigned or deleted): `id` is the user id (0, every user, is still
 * understood but no longer rung). Waits and subscriptions of that user stop (see
 * `auth/revocations.ts`). With a `name` (a plugin's topic), only the waits of that plugin's
 * tokens stop: its reach narrowed or it was deleted. With a `deviceId` of `password:<token id>`
 * the user's password changed: the waits of its tokens stop, but for the token named.
 */
export type DoorbellEventKind = 'command' | 'command-update' | 'notification' | 'resync' | 'plugin' | 'revoke'

export interface DoorbellEvent {
  kind: DoorbellEventKind
  /** Id of the command or notification. */
  id: number
  deviceId: string
  networkId: number | null
  deviceTypeId: number | null
  /** Command or notification name. */
  name: string
  /**
   * The record as written (a notification for `notification`, the command for `command` and
   * `command-update`), when the doorbell carries it: in-process always, over PostgreSQL NOTIFY
   * when it fits the payload. Listeners use it instead of reading the row by `id`.
   */
  record?: NotificationRecord | CommandRecord
  /**
   * Where the write stands in the stamp draw (PostgreSQL writes that ride the statement, whose
   * commits may land out of stamp order): see ordered-doorbell.ts, which puts such events back in
   * stamp order before any listener sees them.
   */
  order?: DrawLink
}

/**
 * One link of the stamp draw chain: the stamp drawn just before this item's (`prev`), the item's
 * own stamp (`stamp`: its insert stamp, or `lastUpdated` for an update), and `nextXid`, the next
 * transaction id the database was to assign after the draw. Once no transaction below `nextXid`
 * is running, every earlier stamp is committed or never will be.
 */
export interface DrawLink {
  prev: number
  stamp: number
  nextXid: number
}

/**
 * Everything at or below it is committed (or never will be), and every later item will reach
 * the doorbell's listeners after this was read: `clock` is a stamp, `notification` and
 * `command` the largest ids.
 */
export interface MessageMark {
  clock: number
  notification: number
  command: number
}

export type DoorbellListener = (event: DoorbellEvent) => void

export interface Doorbell {
  /**
   * Rings the doorbell for an item written in `tx`. Call it inside the write transaction: a
   * doorbell that rides the database (PostgreSQL NOTIFY) sends it there so it fires at commit; the
   * memory doorbell delivers after commit (`tx.afterCommit`). Without `tx` it rings at once.
   */
  publish(event: DoorbellEvent, tx?: Store): Promise<void>
  /**
   * Registers a listener; returns the function that removes it (idempotent). A doorbell should hand
   * the same event object to every listener: waiters woken by one event share one read keyed by
   * it (a distinct object per listener stays correct, only costs more reads). A listener that
   * throws must not stop delivery to the others.
   */
  subscribe(listener: DoorbellListener): () => void
  /**
   * When this doorbell's rings can ride the write statement of `store` itself (PostgreSQL NOTIFY
   * on a PostgreSQL store), the channel to hand the repository (`StoreRing`); the writer then
   * skips `publish`, and the write is one statement and one round trip. Undefined (or absent):
   * call `publish`.
   */
  storeChannel?(store: Store): string | undefined
  /**
   * Told, after the write committed, of a ring that rode the store's statement (`storeChannel`)
   * instead of `publish`, so that a wrapper observing rings (the message counts of
   * operations/hub-stats.ts) still sees it. A wrapper must forward `storeChannel` too: without
   * it every write falls back to a transaction of several round trips.
   */
  storeRang?(event: DoorbellEvent): void
  /**
   * Where a reader stands when it registers now: items at or below the mark are in the store,
   * later ones come through this doorbell (ordered-doorbell.ts). Absent or undefined: read the
   * store's high-water mark instead (its writes commit in stamp order).
   */
  mark?(): MessageMark | undefined
  /**
   * With `mark`: resolves once the writes this process has acknowledged are at or below the mark
   * (or after a short cap), so a client that wrote and then polls the same instance finds its write
   * in the backlog. Absent: the mark never lags this process's writes.
   */
  caughtUp?(): Promise<void>
  /**
   * With `mark`: the newest stamp released for `deviceId` of this kind (or the stamp below which
   * this doorbell knows nothing, if higher). A reader whose cursor is at or past it has nothing to
   * read for that device up to the mark, and skips its backlog read.
   */
  newestFor?(kind: 'notification' | 'command' | 'command-update', deviceId: string): number
  close(): Promise<void>
}
