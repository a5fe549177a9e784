import type { Page } from '../values.js'
import type { MessageScope } from '../realtime/message-filter.js'
import type { CommandPatch, CommandRecord, NewCommand, NotificationRecord } from '../realtime/message-records.js'
import type { DrawLink } from '../realtime/bus.js'

export type { CommandPatch, CommandRecord, NewCommand } from '../realtime/message-records.js'
export { commandExpired } from '../realtime/message-records.js'

export interface CommandQuery extends Page, MessageScope {
  start?: number
  end?: number
  command?: string
  status?: string
  sortField: 'timestamp' | 'command' | 'status'
}

/**
 * Ring the bus from the write statement itself: each written row's bus event is sent
 * (PostgreSQL `pg_notify`) on `channel` by the same statement, so it fires exactly at commit
 * with no extra round trip. The message log passes it where its ordering rides the statement
 * (log-ordering.ts); a store without NOTIFY ignores it.
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

export interface CommandRepository {
  /**
   * Inserts with a stamp of the message clock; `now` feeds the clock. Outside a transaction a
   * store may combine concurrent calls into one statement (group commit).
   */
  insert(command: NewCommand, now: number, ring?: StoreRing): Promise<CommandRecord>
  /** Applies an update (sets isUpdated, lastUpdated from the clock); undefined when missing. */
  update(deviceId: string, id: number, patch: CommandPatch, now: number, ring?: StoreRing): Promise<CommandRecord | undefined>
  findById(id: number): Promise<CommandRecord | undefined>
  /**
   * The command `id` of the device that now has `deviceId`: never one written for an earlier,
   * deleted device with the same id (issue #16).
   */
  findForDevice(deviceId: string, id: number): Promise<CommandRecord | undefined>
  query(filter: CommandQuery): Promise<CommandRecord[]>
  /** Deletes up to `batch` commands last written before `before`; returns how many. */
  prune(before: number, batch: number): Promise<number>
}
