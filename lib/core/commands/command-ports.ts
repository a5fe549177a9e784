import type { Page } from '../values.js'
import type { MessageScope } from '../realtime/message-filter.js'
import type { CommandPatch, CommandRecord, NewCommand } from '../realtime/message-records.js'
import type { StoreRing } from '../realtime/store-ring.js'

export type { CommandPatch, CommandRecord, NewCommand } from '../realtime/message-records.js'
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
