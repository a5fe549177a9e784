/** The command views of spec §2.6 (isUpdated is never serialised). */
import type { JsonObject } from '../ports.js'
import { formatTimestamp } from '../time.js'
import type { CommandRecord } from './command-ports.js'

export interface CommandView {
  id: number
  command: string
  timestamp: string
  lastUpdated: string
  userId: number | null
  deviceId: string
  networkId: number
  deviceTypeId: number
  parameters: JsonObject | null
  lifetime: number | null
  status: string | null
  result: JsonObject | null
}

/** `POST /device/{id}/command` answers only these. */
export interface CommandInsertView {
  id: number
  timestamp: string
  lastUpdated: string
  userId: number | null
}

export function commandView (c: CommandRecord): CommandView {
  return {
    id: c.id,
    command: c.command,
    timestamp: formatTimestamp(c.timestamp),
    lastUpdated: formatTimestamp(c.lastUpdated),
    userId: c.userId,
    deviceId: c.deviceId,
    networkId: c.networkId,
    deviceTypeId: c.deviceTypeId,
    parameters: c.parameters,
    lifetime: c.lifetime,
    status: c.status,
    result: c.result
  }
}

export function commandInsertView (c: CommandRecord): CommandInsertView {
  return { id: c.id, timestamp: formatTimestamp(c.timestamp), lastUpdated: formatTimestamp(c.lastUpdated), userId: c.userId }
}
