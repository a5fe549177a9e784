/** The command views of spec §2.6 (isUpdated is never serialised). */
import type { CommandInsertView, CommandView } from './command-schemas.js'
import { formatTimestamp } from '../time.js'
import type { CommandRecord } from './command-ports.js'

export type { CommandInsertView, CommandView } from './command-schemas.js'

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
