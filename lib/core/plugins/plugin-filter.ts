/**
 * The plugin subscription filter (auth spec §2.7): the query parameters of `POST`/`PUT /plugin`
 * validated and turned into `<kinds>/<networkIds>/<deviceTypeIds>/<deviceId>/<names>`.
 */
import { badRequest } from '../errors.js'

/** The filter query parameters (absent = not given); the flags are booleans once the adapter has read them. */
export interface PluginFilterQuery {
  deviceId?: string
  networkIds?: string
  deviceTypeIds?: string
  names?: string
  returnCommands?: boolean | string
  returnUpdatedCommands?: boolean | string
  returnNotifications?: boolean | string
}

export interface PluginFilterSpec {
  /** The stored filter string. */
  filter: string
  /** Whether any filter parameter was given at all (PUT keeps the old filter otherwise). */
  given: boolean
  networkIds: number[]
  deviceTypeIds: number[]
  deviceId: string | undefined
}

export const NO_RETURN_FLAG_MESSAGE = "Requested subscription is not valid. Please, set at least one 'return*' parameter to true."

/** The column is varchar(1024). */
const MAX_FILTER_LENGTH = 1024

const KINDS = [
  ['returnCommands', 'command'],
  ['returnUpdatedCommands', 'command_update'],
  ['returnNotifications', 'notification']
] as const

/**
 * Validates the filter parameters (400 `Invalid request parameters` for anything malformed)
 * and builds the filter string.
 *
 * @example
 * buildPluginFilter({ networkIds: '1,2', returnCommands: 'true' }).filter // 'command/1,2/*\/*\/*'
 */
export function buildPluginFilter (query: PluginFilterQuery): PluginFilterSpec {
  const flags = KINDS.map(([param, kind]) => ({ kind, value: parseFlag(query[param]) }))
  if (flags.every((flag) => flag.value === false)) throw badRequest(NO_RETURN_FLAG_MESSAGE)
  const explicit = flags.filter((flag) => flag.value === true).map((flag) => flag.kind)
  // No true flag but some false: the missing ones count as true, as at subscription time.
  const implicit = flags.filter((flag) => flag.value === undefined).map((flag) => flag.kind)
  const kinds = flags.every((flag) => flag.value === undefined)
    ? '*'
    : (explicit.length > 0 ? explicit : implicit).join(',')

  const networkIds = parseIdCsv(query.networkIds)
  const deviceTypeIds = parseIdCsv(query.deviceTypeIds)
  const names = parseNameCsv(query.names)
  const deviceId = nonEmpty(query.deviceId)
  if (deviceId !== undefined && /[/,]/.test(deviceId)) throw badRequest()

  const filter = [
    kinds,
    networkIds.length > 0 ? networkIds.join(',') : '*',
    deviceTypeIds.length > 0 ? deviceTypeIds.join(',') : '*',
    deviceId ?? '*',
    names.length > 0 ? names.join(',') : '*'
  ].join('/')
  if (filter.length > MAX_FILTER_LENGTH) throw badRequest()
  const given = Object.values(pick(query)).some((value) => value !== undefined)
  return { filter, given, networkIds, deviceTypeIds, deviceId }
}

function pick (query: PluginFilterQuery): PluginFilterQuery {
  const { deviceId, networkIds, deviceTypeIds, names, returnCommands, returnUpdatedCommands, returnNotifications } = query
  return { deviceId, networkIds, deviceTypeIds, names, returnCommands, returnUpdatedCommands, returnNotifications }
}

/** Booleans as DeviceHive reads them: `true` / `false` in any letter case (R12). */
function parseFlag (value: boolean | string | undefined): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value
  if (/^true$/i.test(value)) return true
  if (/^false$/i.test(value)) return false
  throw badRequest()
}

function nonEmpty (value: string | undefined): string | undefined {
  const text = value?.trim()
  return text === undefined || text === '' ? undefined : text
}

function csv (value: string | undefined): string[] {
  const text = nonEmpty(value)
  if (text === undefined) return []
  const items = text.split(',').map((item) => item.trim())
  if (items.some((item) => item === '')) throw badRequest()
  return [...new Set(items)]
}

function parseIdCsv (value: string | undefined): number[] {
  return csv(value).map((item) => {
    const id = /^\d+$/.test(item) ? Number(item) : NaN
    if (!Number.isSafeInteger(id)) throw badRequest()
    return id
  })
}

function parseNameCsv (value: string | undefined): string[] {
  const names = csv(value)
  // A slash would split the stored filter into the wrong parts.
  if (names.some((name) => name.includes('/'))) throw badRequest()
  return names
}

export type PluginEventKind = 'notification' | 'command' | 'command-update'

/** A stored filter string, parsed for matching (plugin proxy contract §4.3). */
export interface StoredPluginFilter {
  kinds: ReadonlySet<PluginEventKind>
  /** Undefined = any (also when `deviceId` is set: the device's own network and type decide). */
  networkIds?: readonly number[]
  deviceTypeIds?: readonly number[]
  deviceId?: string
  /** Undefined = any name except the system notifications. */
  names?: readonly string[]
}

const ALL_KINDS: ReadonlySet<PluginEventKind> = new Set(['notification', 'command', 'command-update'])
const KIND_NAMES: Record<string, PluginEventKind> = { notification: 'notification', command: 'command', command_update: 'command-update' }
// A memo cache: a filter text always parses to the same (immutable) filter.
const parsedFilters = new Map<string, StoredPluginFilter>()

/**
 * Parses `<kinds>/<networkIds>/<deviceTypeIds>/<deviceId>/<names>`; a part that is not
 * understood matches nothing rather than everything.
 *
 * @example
 * parseStoredFilter('notification/1,2/*\/*\/temp').kinds.has('notification') // true
 */
export function parseStoredFilter (filter: string): StoredPluginFilter {
  let parsed = parsedFilters.get(filter)
  if (parsed !== undefined) return parsed
  const [kinds = '', networks = '*', types = '*', deviceId = '*', names = '*'] = filter.split('/')
  const ids = (part: string): number[] | undefined => part === '*'
    ? undefined
    : part.split(',').map((item) => /^\d+$/.test(item) ? Number(item) : -1)
  parsed = {
    kinds: kinds === '*'
      ? ALL_KINDS
      : new Set(kinds.split(',').map((kind) => KIND_NAMES[kind]).filter((kind) => kind !== undefined)),
    networkIds: deviceId === '*' ? ids(networks) : undefined,
    deviceTypeIds: deviceId === '*' ? ids(types) : undefined,
    deviceId: deviceId === '*' ? undefined : deviceId,
    names: names === '*' ? undefined : names.split(',')
  }
  // Filters are few (one per plugin); the bound only guards against churn.
  if (parsedFilters.size > 10_000) parsedFilters.clear()
  parsedFilters.set(filter, parsed)
  return parsed
}
