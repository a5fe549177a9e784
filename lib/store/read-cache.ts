/**
 * A short-lived in-process cache for the rows every request reads: the authenticated user and
 * its assignments, and the device of a `/device/{id}/...` path. It sits at the store seam,
 * wrapping the repositories, so no write path can forget to invalidate it:
 *
 * - only methods listed as cached are answered from the cache, and only outside transactions
 *   (a transaction may read its own uncommitted writes, or roll back);
 * - every method of a wrapped repository that is not listed as a read clears the whole cache,
 *   before and after it runs, and again after its transaction commits (a concurrent read on
 *   another connection may have cached the old row meanwhile). That covers cascades: deleting a
 *   network or a device type clears the devices and assignments it removed;
 * - entries live at most `ttlMs` (default 10 s): the bound on how stale an answer can be after a
 *   write by another process that says nothing of it. Other instances and the CLI on PostgreSQL
 *   announce theirs (a `stale-reads` bus event, `Store.watchOwnWrites`), and a server sees the
 *   CLI's commits to its SQLite file within 250 ms (`Store.watchOtherWriters`); both drop the
 *   whole cache. What is left is a hand-written SQL change, or an instance of a version before
 *   stop 60 during a rolling upgrade.
 *
 * Concurrent misses on one key share one read. Callers get a shallow copy of each record.
 */

export const DEFAULT_READ_CACHE_TTL_MS = 10_000
const DEFAULT_MAX_ENTRIES = 10_000

export interface ReadCacheOptions {
  /** How long an entry may be served (ms); 0 disables the cache. */
  ttlMs?: number
  /** Entries beyond this are not stored (the cache is cleared when full). */
  maxEntries?: number
  /** Monotonic milliseconds (tests). */
  now?: () => number
}

export interface ReadCache {
  readonly enabled: boolean
  get<T>(key: string, load: () => Promise<T>): Promise<T>
  invalidate(): void
}

interface Entry {
  value: Promise<unknown>
  expires: number
}

/**
 * @example
 * const cache = createReadCache({ ttlMs: 1000 })
 * const user = await cache.get(`user:${id}`, () => repository.findById(id))
 */
export function createReadCache (options: ReadCacheOptions = {}): ReadCache {
  const ttlMs = options.ttlMs ?? DEFAULT_READ_CACHE_TTL_MS
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES
  const now = options.now ?? (() => performance.now())
  const entries = new Map<string, Entry>()
  return {
    enabled: ttlMs > 0,
    get<T> (key: string, load: () => Promise<T>): Promise<T> {
      const time = now()
      const hit = entries.get(key)
      if (hit !== undefined && hit.expires > time) return hit.value as Promise<T>
      const value = load()
      if (entries.size >= maxEntries) entries.clear()
      const entry: Entry = { value, expires: time + ttlMs }
      entries.set(key, entry)
      // A failed read is not remembered.
      value.catch(() => { if (entries.get(key) === entry) entries.delete(key) })
      return value
    },
    invalidate () {
      entries.clear()
    }
  }
}

type AnyMethod = (...args: unknown[]) => Promise<unknown>

function copy (value: unknown): unknown {
  if (Array.isArray(value)) return value.slice()
  if (value !== null && typeof value === 'object') return { ...value }
  return value
}

/** Where a wrapped repository's writes stand: its transaction, and who hears of them. */
export interface CachedWrites {
  /** Schedules the post-commit invalidation inside a transaction; undefined outside one. */
  afterCommit: ((fn: () => void) => void) | undefined
  /** Runs after each write that succeeded (the store tells other instances: `Store.watchOwnWrites`). */
  written: () => Promise<void>
}

/**
 * Wraps a repository: `cached` methods (name -> key prefix) are served from `cache` outside
 * transactions, `reads` pass through, and every other method invalidates the cache and, once it
 * succeeded, calls `writes.written`.
 *
 * @example
 * users = cachedRepository(users, cache, { cached: { findById: 'user' }, reads: ['list'] }, { afterCommit: undefined, written })
 */
export function cachedRepository<T extends object> (
  repository: T,
  cache: ReadCache,
  methods: { cached?: Partial<Record<keyof T, string>>, reads?: ReadonlyArray<keyof T> },
  writes: CachedWrites
): T {
  const { afterCommit, written } = writes
  const wrapped: Record<string, unknown> = {}
  const reads = new Set<PropertyKey>(methods.reads ?? [])
  const cached = (methods.cached ?? {}) as Record<string, string | undefined>
  const inTransaction = afterCommit !== undefined
  const invalidate = (): void => cache.invalidate()
  for (const [name, value] of Object.entries(repository)) {
    if (typeof value !== 'function') {
      wrapped[name] = value
      continue
    }
    const method = value as AnyMethod
    const prefix = cached[name]
    if (prefix !== undefined || reads.has(name)) {
      wrapped[name] = prefix === undefined || inTransaction || !cache.enabled
        ? method
        : async (key: unknown) => copy(await cache.get(`${prefix}:${String(key)}`, () => method(key)))
      continue
    }
    wrapped[name] = async (...args: unknown[]) => {
      invalidate()
      let result: unknown
      try {
        result = await method(...args)
      } finally {
        invalidate()
        afterCommit?.(invalidate)
      }
      await written()
      return result
    }
  }
  return wrapped as T
}
