/**
 * The plugin subscription filter (auth spec §2.7): the query parameters of `POST`/`PUT /plugin`
 * validated and turned into `<kinds>/<networkIds>/<deviceTypeIds>/<deviceId>/<names>`.
 */
import { badRequest } from '../errors.js'

/** The filter query parameters as they arrive (strings; absent = not given). */
export interface PluginFilterQuery {
  deviceId?: string
  networkIds?: string
  deviceTypeIds?: string
  names?: string
  returnCommands?: string
  returnUpdatedCommands?: string
  returnNotifications?: string
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

function parseFlag (value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined
  if (value === 'true') return true
  if (value === 'false') return false
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
