/**
 * The REST adapter's share of the long-poll and stream parameters: CSV lists and timestamp text
 * become the typed inputs of the core (the messages are the contract's, from poll-params.ts).
 */
import { parseDeviceIds, parseIdList, parseNames, parseQueryTimestamp } from '../core/realtime/poll-params.js'

export interface PollQueryText {
  names?: string
  timestamp?: string
  deviceIds?: string
  networkIds?: string
  deviceTypeIds?: string
}

/** Every key present (undefined when absent), so spreading it over the raw query replaces the text. */
export interface ParsedPollQuery {
  names: string[] | undefined
  timestamp: number | undefined
  deviceIds: string[] | undefined
  networkIds: number[] | undefined
  deviceTypeIds: number[] | undefined
}

/**
 * @example
 * parsePollQuery({ names: 'a,b', networkIds: '1,2', timestamp: '2026-01-01' })
 * // { names: ['a', 'b'], networkIds: [1, 2], timestamp: 1767225600000, deviceIds: undefined, deviceTypeIds: undefined }
 */
export function parsePollQuery (query: PollQueryText): ParsedPollQuery {
  return {
    names: parseNames(query.names),
    timestamp: parseQueryTimestamp(query.timestamp),
    deviceIds: parseDeviceIds(query.deviceIds),
    networkIds: parseIdList(query.networkIds),
    deviceTypeIds: parseIdList(query.deviceTypeIds)
  }
}
