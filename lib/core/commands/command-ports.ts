import type { JsonObject, Page } from '../ports.js'
import type { MessageScope, MessageSelector } from '../realtime/message-filter.js'

export interface CommandRecord {
  id: number
  command: string
  deviceId: string
  networkId: number
  deviceTypeId: number
  userId: number | null
  parameters: JsonObject | null
  lifetime: number | null
  status: string | null
  result: JsonObject | null
  /** Epoch ms: client-given, or assigned by the message clock (strictly increasing). */
  timestamp: number
  lastUpdated: number
  /** Internal (§6.4): true after the first update; never serialised. */
  isUpdated: boolean
}

/** A command to insert: the stored fields less what the server assigns. */
export type NewCommand = Omit<CommandRecord, 'id' | 'timestamp' | 'lastUpdated' | 'isUpdated'> & {
  /** Client-given timestamp (stored as given); absent = the message clock assigns one. */
  timestamp?: number
}

export interface CommandPatch {
  status?: string
  result?: JsonObject
}

export interface CommandQuery extends Page, MessageScope {
  start?: number
  end?: number
  command?: string
  status?: string
  sortField: 'timestamp' | 'command' | 'status'
}

export interface CommandBacklogQuery extends MessageSelector {
  /** Items strictly after this (timestamp, or lastUpdated when `updated`). */
  after: number
  limit: number
  /** `returnUpdatedCommands`: updated commands by `lastUpdated` instead of inserts. */
  updated: boolean
  /** R7: commands whose lifetime has passed by `now` without an update are left out. */
  now: number
}

/** Where the store stood when a waiter subscribed (see long-poll.ts). */
export interface HighWater {
  /** Largest id committed. */
  id: number
  /** The message clock: the last server-assigned timestamp. */
  clock: number
}

export interface CommandRepository {
  /** Inserts in one transaction with the message clock; `now` feeds the clock. */
  insert(command: NewCommand, now: number): Promise<CommandRecord>
  /** Applies an update (sets isUpdated, lastUpdated from the clock); undefined when missing. */
  update(deviceId: string, id: number, patch: CommandPatch, now: number): Promise<CommandRecord | undefined>
  findById(id: number): Promise<CommandRecord | undefined>
  query(filter: CommandQuery): Promise<CommandRecord[]>
  /** Poll backlog: oldest first, at most `limit`. */
  backlog(query: CommandBacklogQuery): Promise<CommandRecord[]>
  highWater(): Promise<HighWater>
  /** Deletes up to `batch` commands last written before `before`; returns how many. */
  prune(before: number, batch: number): Promise<number>
}

/** R7: a command whose lifetime has passed without an update is not handed to pollers. */
export function commandExpired (command: Pick<CommandRecord, 'lifetime' | 'timestamp' | 'isUpdated'>, now: number): boolean {
  return command.lifetime !== null && !command.isUpdated && command.timestamp + command.lifetime * 1000 < now
}
