import type { Page } from '../values.js'
import type { MessageScope } from '../realtime/message-filter.js'
import type { CommandPatch, CommandRecord, CommandWrite, NewCommand } from '../realtime/message-records.js'
import type { StoreRing } from '../realtime/store-ring.js'

export type { CommandPatch, CommandRecord, CommandUpdate, CommandWrite, NewCommand } from '../realtime/message-records.js'
export { commandExpired } from '../realtime/message-records.js'
export type { StoreRing } from '../realtime/store-ring.js'

export interface CommandQuery extends Page, MessageScope {
  start?: number
  end?: number
  command?: string
  status?: string
  sortField: 'timestamp' | 'command' | 'status'
}

export interface CommandRepository {
  /**
   * Inserts with a stamp of the message clock; `now` feeds the clock. Outside a transaction a
   * store may combine concurrent calls into one statement (group commit).
   */
  insert(command: NewCommand, now: number, ring?: StoreRing): Promise<CommandRecord>
  /** Applies an update (sets isUpdated, lastUpdated from the clock); undefined when missing. */
  update(deviceId: string, id: number, patch: CommandPatch, now: number, ring?: StoreRing): Promise<CommandRecord | undefined>
  /**
   * Writes `batch` in order, each write with its own stamp of the clock, so the stamps follow the
   * batch's order; answers each write's record (undefined for an update of a command that is not
   * there). Called on a transaction, the writes share its commit, and one that fails fails it.
   * Called on the store, a dialect commits them together (SQLite: one transaction) or one by one
   * (PostgreSQL: each write is one statement).
   *
   * @example
   * const [inserted, updated] = await store.commands.writeMany([
   *   { kind: 'command', input }, { kind: 'command-update', deviceId: 'd1', id: 7, patch: { status: 'Done' } }
   * ], Date.now())
   */
  writeMany(batch: readonly CommandWrite[], now: number): Promise<Array<CommandRecord | undefined>>
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
