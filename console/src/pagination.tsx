/**
 * Paged lists: one page at a time from the API (`take`/`skip`), the total from its `/count`
 * route, and a pager ("51–100 of 100,000", page size, first/previous/next/last, a page jump).
 * The page, its size and the page's own filters live in the hash (`#/devices?page=3&size=50`),
 * so a reload or a shared link shows the same page.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import type { Api } from './api.js'
import type { Loaded } from './ui.js'
import { useLoad } from './ui.js'

export const PAGE_SIZES = [25, 50, 100, 200] as const
const DEFAULT_SIZE = 50
/** Fired after a change to the hash query, so every user of it on the page reads it again. */
const CHANGED = 'devicehub:hash-query'

function hashParts (): [string, URLSearchParams] {
  const hash = location.hash
  const at = hash.indexOf('?')
  return at < 0 ? [hash, new URLSearchParams()] : [hash.slice(0, at), new URLSearchParams(hash.slice(at + 1))]
}

/** Changes to the hash query: a value of `undefined` or `''` removes the parameter. */
export type QueryPatch = Record<string, string | number | undefined>

/**
 * The parameters after `?` in the hash, and a setter. `push` adds a history entry (so Back
 * returns to the previous page of a list); otherwise the current entry is replaced (typing).
 */
export function useHashQuery (): [URLSearchParams, (patch: QueryPatch, push?: boolean) => void] {
  const [query, setQuery] = useState(() => hashParts()[1])
  useEffect(() => {
    const sync = (): void => setQuery(hashParts()[1])
    const events = ['hashchange', 'popstate', CHANGED]
    for (const name of events) addEventListener(name, sync)
    return () => { for (const name of events) removeEventListener(name, sync) }
  }, [])
  const update = useCallback((patch: QueryPatch, push = false) => {
    const [path, params] = hashParts()
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined || value === '') params.delete(key)
      else params.set(key, String(value))
    }
    const text = params.toString()
    const url = `${location.pathname}${location.search}${path === '' || path === '#' ? '#/' : path}${text === '' ? '' : `?${text}`}`
    if (url === `${location.pathname}${location.search}${location.hash}`) return
    if (push) history.pushState(null, '', url)
    else history.replaceState(null, '', url)
    dispatchEvent(new Event(CHANGED))
  }, [])
  return [query, update]
}

/** A whole number from the hash, or `fallback` when it is missing or not one in range. */
function whole (value: string | null, fallback: number, min: number, max: number): number {
  const n = Number(value)
  return value !== null && Number.isSafeInteger(n) && n >= min && n <= max ? n : fallback
}

/** One request's rows and total, shown together. */
interface Shown<T> { items: T[], total: number, page: number, size: number }

export interface PagedList<T> extends Loaded<T[]> {
  /** Rows matching the filters, all pages together, as shown; undefined until counted. */
  total: number | undefined
  /** The page asked for, 1-based (the hash's); `shownPage` is the one whose rows are shown. */
  page: number
  size: number
  pages: number
  /** The page and size of the rows shown (the range's): behind `page` while it loads. */
  shownPage: number
  shownSize: number
  setPage(page: number): void
  setSize(size: number): void
}

/**
 * One page of `GET {path}` and the total of `GET {path}/count`, both with `filters`; the
 * listing also gets `order` (`sortField`, `sortOrder`). Reloading reloads both.
 *
 * @example
 * const list = usePagedList<Named>(api, '/network', {}, { sortField: 'name' })
 * // <Pager list={list} noun="network" />
 */
export function usePagedList<T> (api: Api, path: string, filters: QueryPatch, order: QueryPatch = {}): PagedList<T> {
  const [query, update] = useHashQuery()
  const size = whole(query.get('size'), DEFAULT_SIZE, 1, 1000)
  const page = whole(query.get('page'), 1, 1, Number.MAX_SAFE_INTEGER)
  const params = (extra: QueryPatch): string => {
    const search = new URLSearchParams()
    for (const [key, value] of Object.entries({ ...filters, ...extra })) if (value !== undefined && value !== '') search.set(key, String(value))
    return search.toString()
  }
  const filterKey = params({})
  const rowsUrl = `${path}?${params({ ...order, take: size, skip: (page - 1) * size })}`
  const countUrl = `${path}/count?${filterKey}`
  // A reload asks both again under a new key: until both answers of that key are back, the last
  // pair stays shown (new rows under the old total would show a deleted row's range for a moment).
  const [reloads, setReloads] = useState(0)
  const rowsKey = `${reloads} ${rowsUrl}`
  const countKey = `${reloads} ${countUrl}`
  const rows = useLoad(async () => ({ key: rowsKey, items: await api.request<T[]>('GET', rowsUrl) }), [rowsKey])
  const count = useLoad(async () => ({ key: countKey, count: (await api.request<{ count: number }>('GET', countUrl)).count }), [countKey])
  // The rows, the total and the range shown are those of one request: while another page or
  // search loads, the last one stays whole (never the new range over the old rows).
  const shown = useRef<Shown<T> | undefined>(undefined)
  if (rows.data?.key === rowsKey && count.data?.key === countKey) {
    shown.current = { items: rows.data.items, total: count.data.count, page, size }
  }
  const total = shown.current?.total
  const counted = count.data?.key === countKey ? count.data.count : undefined
  const pages = Math.max(1, Math.ceil((total ?? 0) / size))

  // Past the end (rows deleted, a narrower search, an old link): show the last page instead.
  useEffect(() => {
    const last = Math.max(1, Math.ceil((counted ?? 0) / size))
    if (counted !== undefined && !count.loading && page > last) update({ page: last === 1 ? undefined : last })
  }, [counted, count.loading, page, size])

  const reload = useCallback(() => setReloads((n) => n + 1), [])
  return {
    data: shown.current?.items,
    error: rows.error ?? count.error,
    loading: rows.loading || count.loading,
    reload,
    total,
    page,
    size,
    pages,
    shownPage: shown.current?.page ?? page,
    shownSize: shown.current?.size ?? size,
    setPage: (n) => update({ page: n <= 1 ? undefined : Math.min(n, pages) }, true),
    setSize: (n) => update({ size: n === DEFAULT_SIZE ? undefined : n, page: undefined })
  }
}

const number = (n: number): string => n.toLocaleString('en-US')

/** The range shown and the controls to move through the pages of `list`. */
export function Pager<T> ({ list, noun, id = 'pager' }: { list: PagedList<T>, noun: string, id?: string }) {
  const { total, page, size, pages } = list
  const [jump, setJump] = useState(String(page))
  useEffect(() => setJump(String(page)), [page])
  if (total === undefined) return null
  const first = total === 0 ? 0 : (list.shownPage - 1) * list.shownSize + 1
  const last = Math.min(total, list.shownPage * list.shownSize)
  const range = total === 0 ? `No ${noun}s` : `${number(first)}–${number(last)} of ${number(total)}`
  const go = (n: number): void => { if (n >= 1 && n <= pages && n !== page) list.setPage(n) }
  return (
    <nav class="pager" aria-label={`Pages of ${noun}s`}>
      <span class="pager-range" id={`${id}-range`} role="status">{range}</span>
      <span class="pager-buttons">
        <button type="button" class="secondary" disabled={page <= 1} onClick={() => go(1)} aria-label="First page">« First</button>
        <button type="button" class="secondary" disabled={page <= 1} onClick={() => go(page - 1)} aria-label="Previous page">‹ Previous</button>
        <form class="pager-jump" onSubmit={(e) => { e.preventDefault(); go(Number(jump)) }}>
          <label for={`${id}-page`}>Page</label>
          <input id={`${id}-page`} type="number" inputMode="numeric" min={1} max={pages} value={jump}
            onInput={(e) => setJump(e.currentTarget.value)} onChange={(e) => go(Number(e.currentTarget.value))} />
          <span>of {number(pages)}</span>
        </form>
        <button type="button" class="secondary" disabled={page >= pages} onClick={() => go(page + 1)} aria-label="Next page">Next ›</button>
        <button type="button" class="secondary" disabled={page >= pages} onClick={() => go(pages)} aria-label="Last page">Last »</button>
      </span>
      <label class="pager-size">
        <span>Per page</span>
        <select value={String(size)} onChange={(e) => list.setSize(Number(e.currentTarget.value))}>
          {(PAGE_SIZES.includes(size as 25) ? PAGE_SIZES : [...PAGE_SIZES, size].sort((a, b) => a - b)).map((n) => <option key={n} value={String(n)}>{n}</option>)}
        </select>
      </label>
    </nav>
  )
}

/** `value` once it has stopped changing for `ms` milliseconds (typing in a search box). */
export function useDebounced<T> (value: T, ms = 300): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(timer)
  }, [value, ms])
  return settled
}
