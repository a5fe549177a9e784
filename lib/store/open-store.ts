/**
 * Opens the store a location names: a SQLite file path or `:memory:`, or a `postgres://`
 * (`postgresql://`) URL. The PostgreSQL dialect (and `pg`) is loaded only for a URL.
 */
import type { KyselyStore } from './kysely-store.js'
import type { Durability } from './durability.js'
import { openSqliteStore } from './dialects/sqlite.js'
import { sqliteErrorCode } from './dialects/sqlite-driver.js'
import { lockDatabaseFile } from './file-lock.js'
import { checkStoreLocation } from './location-check.js'

export { describeLocation } from './location-check.js'

export interface OpenStoreOptions {
  /** Run pending migrations (default true). */
  migrate?: boolean
  /** `normal` or `full` (see durability.ts); default `normal` on SQLite, the server's setting (`full`) on PostgreSQL. */
  durability?: Durability
  /** Refuse a SQLite file that does not exist yet instead of creating it (CLI tools that read). */
  mustExist?: boolean
  /**
   * Hold `<file>.lock` while the store is open, refusing a second server on one SQLite file
   * (file-lock.ts). Released by `close()`.
   */
  lock?: boolean
}

/** A SQLite database in a file (not `:memory:`, not a URL). */
export function isSqliteFile (location: string): boolean {
  return !isPostgresUrl(location) && location !== ':memory:' && location !== '' && !location.startsWith('file::memory:')
}

export function isPostgresUrl (location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location)
}

/**
 * @example
 * const store = await openStore('./devicehub.db')
 * const shared = await openStore('postgres://devicehub@db:5432/devicehub', { migrate: false })
 */
export async function openStore (location: string, options: OpenStoreOptions = {}): Promise<KyselyStore> {
  checkStoreLocation(location, { mustExist: options.mustExist })
  if (isPostgresUrl(location)) {
    const { openPostgresStore } = await import('./dialects/postgres.js')
    return openPostgresStore(location, { migrate: options.migrate, durability: options.durability })
  }
  const lock = options.lock === true && isSqliteFile(location) ? lockDatabaseFile(location) : undefined
  try {
    const store = await openSqliteStore(location, { migrate: options.migrate, durability: options.durability })
    if (lock === undefined) return store
    const close = store.close.bind(store)
    return Object.assign(store, {
      async close () {
        try {
          await close()
        } finally {
          lock.release()
        }
      }
    })
  } catch (error) {
    lock?.release()
    if (sqliteErrorCode(error) === 'SQLITE_NOTADB') {
      throw new Error(`${location} is not a SQLite database: give the path of a devicehub database, or of a new file`, { cause: error })
    }
    throw error
  }
}
