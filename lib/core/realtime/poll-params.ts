/** Parsing and checks of the long-poll and query parameters, with the contract's messages (§6.7). */
import { badRequest } from '../errors.js'
import { parseTimestamp } from '../time.js'

export const DEFAULT_WAIT_SECONDS = 30
export const MAX_WAIT_SECONDS = 60

/** `waitTimeout`: default 30, 0..60 (the trailing spaces are Java's). */
export function parseWaitTimeout (value: number | undefined): number {
  if (value === undefined) return DEFAULT_WAIT_SECONDS
  if (value < 0) throw badRequest('Timeout can\'t be less than 0 seconds. ')
  if (value > MAX_WAIT_SECONDS) throw badRequest('Timeout can\'t be more than 60 seconds. ')
  return value
}

/**
 * `limit` of command and notification polls (§7.3): default 100, not negative, capped at `max`
 * like `take` (R10, issue #16). `0` means no limit, as Java 3.x read it (so, `max`): the Python
 * client sends `limit=0` on every poll after its subscription probe.
 *
 * @example
 * parseLimit(0, 10_000) // 10000
 */
export function parseLimit (value: number | undefined, max: number): number {
  if (value === undefined) return Math.min(100, max)
  if (Number.isNaN(value)) throw badRequest()
  if (value < 0) throw badRequest('Limit can\'t be less than 0.')
  return value === 0 ? max : Math.min(value, max)
}

/** A timestamp query parameter: undefined when absent or empty; 400 when unparseable (§1.4). */
export function parseQueryTimestamp (value: string | undefined): number | undefined {
  const parsed = parseTimestamp(value)
  if (parsed === null) throw badRequest('Unparseable timestamp')
  return parsed
}

/** A CSV of names; absent or empty = no filter. */
export function parseNames (value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  const names = value.split(',').map((n) => n.trim()).filter((n) => n !== '')
  return names.length === 0 ? undefined : names
}

/** A typed name filter: an empty list is no filter. */
export function namesOf (names: readonly string[] | undefined): readonly string[] | undefined {
  return names === undefined || names.length === 0 ? undefined : names
}

/** A CSV of integer ids; absent or empty = no filter; anything else is 400. */
export function parseIdList (value: string | undefined): number[] | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const ids = value.split(',').map((p) => p.trim()).filter((p) => p !== '')
  if (ids.length === 0) return undefined
  return ids.map((p) => {
    if (!/^\d+$/.test(p) || !Number.isSafeInteger(Number(p))) throw badRequest()
    return Number(p)
  })
}

/** A CSV of device ids (R2). */
export function parseDeviceIds (value: string | undefined): string[] | undefined {
  return parseNames(value)
}

/** A numeric path id; anything else answers `notFoundError` (spec §6.3: 404, not 500). */
export function parsePathId (value: string, notFoundError: () => Error): number {
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) throw notFoundError()
  return Number(value)
}

/** `sortOrder` of message queries: DESC unless given; anything but DESC is ascending (§6.2). */
export function parseMessageSortOrder (value: string | undefined): 'ASC' | 'DESC' {
  if (value === undefined || value === '') return 'DESC'
  return value.toUpperCase() === 'DESC' ? 'DESC' : 'ASC'
}

/** `take`/`skip` of message queries: a non-negative integer (a huge one is capped by the caller), else 400. */
function pagingNumber (value: number | undefined): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || (Number.isFinite(value) && !Number.isInteger(value))) {
    throw badRequest()
  }
  return Math.min(value, Number.MAX_SAFE_INTEGER)
}

export interface MessageQueryInput {
  start?: string
  end?: string
  sortField?: string
  sortOrder?: string
  take?: number
  skip?: number
}

/**
 * The shared parameters of the command and notification queries (§6.2, §6.9): inclusive
 * `start`/`end`, a sort field from `sortFields` (case-insensitive, else `timestamp`), newest first
 * by default, `take` 100 by default and capped at `maxTake` (R10).
 *
 * @example
 * parseMessageQuery({ sortField: 'COMMAND' }, { timestamp: 'timestamp', command: 'command' }, 10_000)
 */
export function parseMessageQuery<F extends string> (input: MessageQueryInput, sortFields: Readonly<Record<string, F>>, maxTake: number): {
  start: number | undefined
  end: number | undefined
  sortField: F | 'timestamp'
  sortOrder: 'ASC' | 'DESC'
  take: number
  skip: number
} {
  return {
    start: parseQueryTimestamp(input.start),
    end: parseQueryTimestamp(input.end),
    sortField: sortFields[(input.sortField ?? 'timestamp').toLowerCase()] ?? 'timestamp',
    sortOrder: parseMessageSortOrder(input.sortOrder),
    take: Math.min(pagingNumber(input.take) ?? 100, maxTake),
    skip: pagingNumber(input.skip) ?? 0
  }
}
