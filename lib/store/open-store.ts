/**
 * Opens the store a location names: a SQLite file path or `:memory:`, or a `postgres://`
 * (`postgresql://`) URL. The PostgreSQL dialect (and `pg`) is loaded only for a URL.
 */
import type { KyselyStore } from './kysely-store.js'
import { openSqliteStore } from './dialects/sqlite.js'

export interface OpenStoreOptions {
  /** Run pending migrations (default true). */
  migrate?: boolean
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
  if (isPostgresUrl(location)) {
    const { openPostgresStore } = await import('./dialects/postgres.js')
    return openPostgresStore(location, { migrate: options.migrate })
  }
  return openSqliteStore(location, options)
}

/** A location safe to print: the password of a URL is masked. */
export function describeLocation (location: string): string {
  return location.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1****@')
}
