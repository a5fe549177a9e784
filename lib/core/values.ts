/**
 * The plain values the ports and services share: JSON objects, data scopes, list pages. A leaf:
 * it imports nothing, so every area's ports can use it (ports.ts re-exports it).
 */
export type JsonObject = { [key: string]: unknown }

/**
 * What a caller may see, as plain ids: `'all'` or an explicit list (possibly empty, which
 * means nothing). Devices are visible when both their network and their type are.
 */
export interface DataScope {
  readonly networkIds: 'all' | readonly number[]
  readonly deviceTypeIds: 'all' | readonly number[]
}

export const FULL_SCOPE: DataScope = { networkIds: 'all', deviceTypeIds: 'all' }

/** Common list parameters after validation (spec §1.7). */
export interface Page {
  readonly take?: number
  readonly skip?: number
  readonly sortOrder?: 'ASC' | 'DESC'
}
