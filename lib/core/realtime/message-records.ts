/**
 * The records of the message log: a notification, a command (its insert and its updates), what a
 * write of each takes, and the lifetime rule of commands (R7). They belong to the log, which
 * every reader reads; the command and notification ports re-export them.
 */
import type { JsonObject } from '../values.js'

export interface NotificationRecord {
  id: number
  notification: string
  deviceId: string
  /** Null only for rows imported from DeviceHive; devicehub fills both (R3). */
  networkId: number | null
  deviceTypeId: number | null
  timestamp: number
  parameters: JsonObject | null
  /** Internal, never serialised: the message clock's stamp of the insert, the poll cursor (see CommandRecord.stamp). */
  stamp: number
}

export interface NewNotification {
  notification: string
  deviceId: string
  networkId: number | null
  deviceTypeId: number | null
  parameters: JsonObject | null
  /** Client-given timestamp (epoch ms): a wish for the clock's reading (client-timestamp.ts), not stored as such. */
  timestamp?: number
}

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
  /**
   * Epoch ms: the message clock's stamp of the insert (`stamp`), a client's timestamp kept only
   * when the clock could take it (client-timestamp.ts). Rows stored before issue #23 may hold a
   * client timestamp in the table; the repositories answer their stamp.
   */
  timestamp: number
  lastUpdated: number
  /** Internal (§6.4): true after the first update; never serialised. */
  isUpdated: boolean
  /**
   * Internal, never serialised: the message clock's stamp of the insert (server time, strictly
   * increasing in commit order), the poll cursor. Equal to `timestamp` (issue #23).
   */
  stamp: number
}

/** A command to insert: the stored fields less what the server assigns. */
export type NewCommand = Omit<CommandRecord, 'id' | 'timestamp' | 'lastUpdated' | 'isUpdated' | 'stamp'> & {
  /** Client-given timestamp: a wish for the clock's reading (client-timestamp.ts), not stored as such. */
  timestamp?: number
}

/**
 * The record of an inserted notification, from its input, id and stamp: what reading the row
 * back would give (the parameters are the input's own object, stored as its JSON).
 */
export function notificationRecordOf (n: NewNotification, id: number, stamp: number): NotificationRecord {
  return {
    id, notification: n.notification, deviceId: n.deviceId, networkId: n.networkId, deviceTypeId: n.deviceTypeId,
    timestamp: stamp, parameters: n.parameters ?? null, stamp
  }
}

/**
 * The record of an inserted command, from its input, id and stamp: what reading the row back
 * would give (never updated yet; the JSON values are the input's own objects).
 */
export function commandRecordOf (c: NewCommand, id: number, stamp: number): CommandRecord {
  return {
    id, command: c.command, deviceId: c.deviceId, networkId: c.networkId, deviceTypeId: c.deviceTypeId, userId: c.userId,
    parameters: c.parameters ?? null, lifetime: c.lifetime ?? null, status: c.status ?? null, result: c.result ?? null,
    timestamp: stamp, lastUpdated: stamp, isUpdated: false, stamp
  }
}

export interface CommandPatch {
  status?: string
  result?: JsonObject
  /** Replaced only by the MQTT endpoint's `command/update` (devicehive-mqtt's suite expects it); null clears. */
  parameters?: JsonObject | null
}

/** An update of command `id` of the device `deviceId`, as a write carries it. */
export interface CommandUpdate {
  deviceId: string
  id: number
  patch: CommandPatch
}

/** One write of a batch (`CommandRepository.writeMany`): a command to insert, or an update. */
export type CommandWrite = { kind: 'command', input: NewCommand } | ({ kind: 'command-update' } & CommandUpdate)

/**
 * The log stamp a record of `kind` stands at: its insert's, or `lastUpdated` for an update (the
 * cursor a reader resumes after).
 *
 * @example
 * messageStamp('command-update', command) // command.lastUpdated
 */
export function messageStamp (kind: 'notification' | 'command' | 'command-update', record: NotificationRecord | CommandRecord): number {
  return kind === 'command-update' ? (record as CommandRecord).lastUpdated : record.stamp
}

/**
 * R7: a command whose lifetime has passed without an update is not handed to pollers. The
 * lifetime counts from the server's stamp, never a client's timestamp; `0`, like null, is no
 * lifetime (DeviceHive stores it and never expires the command), over REST and WebSocket alike.
 *
 * @example
 * commandExpired({ lifetime: 5, stamp: 1000, isUpdated: false }, 7000) // true
 */
export function commandExpired (command: Pick<CommandRecord, 'lifetime' | 'stamp' | 'isUpdated'>, now: number): boolean {
  return command.lifetime !== null && command.lifetime > 0 && !command.isUpdated && command.stamp + command.lifetime * 1000 < now
}
