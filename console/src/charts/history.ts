/**
 * A device's stored notifications of a time range, newest first, paged through
 * `GET /device/{id}/notification` (the server caps each page at its `--max-take`, so paging
 * goes on until an empty page) and capped at {@link MAX_HISTORY}: beyond it the charts show the
 * latest ones and say so.
 */
import type { Api, Notification } from '../api.js'

export const MAX_HISTORY = 10_000
const PAGE = 1000

export interface History {
  /** Ascending by time. */
  items: Notification[]
  /** More notifications of the range exist than were loaded (the oldest are left out). */
  capped: boolean
}

/**
 * @example
 * const { items, capped } = await loadHistory(api, 'sensor-1', { start: Date.now() - 3_600_000 }, signal)
 */
export async function loadHistory (api: Api, deviceId: string, range: { start: number, end?: number, name?: string }, signal: AbortSignal): Promise<History> {
  const base = new URLSearchParams({ start: new Date(range.start).toISOString(), sortField: 'timestamp', sortOrder: 'DESC' })
  if (range.end !== undefined) base.set('end', new Date(range.end).toISOString())
  if (range.name !== undefined) base.set('notification', range.name)
  const page = async (take: number, skip: number): Promise<Notification[]> => {
    const query = new URLSearchParams(base)
    query.set('take', String(take))
    query.set('skip', String(skip))
    return await api.request<Notification[]>('GET', `/device/${encodeURIComponent(deviceId)}/notification?${query.toString()}`, undefined, signal)
  }
  const byId = new Map<number, Notification>()
  let skip = 0
  while (byId.size < MAX_HISTORY) {
    const rows = await page(Math.min(PAGE, MAX_HISTORY - byId.size), skip)
    if (rows.length === 0) return { items: ascending(byId), capped: false }
    // New rows pushed older ones down a page meanwhile: repeats are dropped by id.
    for (const n of rows) byId.set(n.id, n)
    skip += rows.length
  }
  const more = await page(1, skip)
  return { items: ascending(byId), capped: more.length > 0 }
}

function ascending (byId: Map<number, Notification>): Notification[] {
  return [...byId.values()].sort((a, b) => a.timestamp === b.timestamp ? a.id - b.id : (a.timestamp < b.timestamp ? -1 : 1))
}
