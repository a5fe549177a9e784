/**
 * The message writes a dialect does its own way. PostgreSQL writes each batch as one statement
 * (stamp draw, row and NOTIFY: pg-message-writes.ts); a dialect without its own writes leaves
 * them to the portable repositories (the clock row's lock, then the row). The dialect chooses
 * (`StoreDialect.messageWrites`); the repositories never ask which dialect they run on.
 */
import type { CommandRecord, CommandUpdate, NewCommand, StoreRing } from '../../core/commands/command-ports.js'
import type { NewNotification, NotificationRecord } from '../../core/notifications/notification-ports.js'

/**
 * Writes of one database handle (the pool or one transaction): `ring` names the channel the
 * statement sends each row's bus event on (undefined: none, the caller publishes).
 *
 * @example
 * const writes = dialect.messageWrites?.(db)
 * const row = writes === undefined ? await portableInsert(input) : await writes.insertNotification(input, Date.now(), undefined)
 */
export interface MessageWrites {
  insertNotification(input: NewNotification, now: number, ring: StoreRing | undefined): Promise<NotificationRecord>
  /** Several inserts in one statement and one clock step; records in the order given. */
  insertNotifications(list: readonly NewNotification[], now: number, ring: StoreRing | undefined): Promise<NotificationRecord[]>
  insertCommand(input: NewCommand, now: number, ring: StoreRing | undefined): Promise<CommandRecord>
  /** Undefined where the command does not exist for that device. */
  updateCommand(update: CommandUpdate, now: number, ring: StoreRing | undefined): Promise<CommandRecord | undefined>
}
