/**
 * Opens the store a location names: a SQLite file path or `:memory:` today; a `postgres://`
 * URL when the PostgreSQL dialect is installed.
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

export async function openStore (location: string, options: OpenStoreOptions = {}): Promise<KyselyStore> {
  if (isPostgresUrl(location)) {
    throw new Error('PostgreSQL is not supported by this build yet')
  }
  return openSqliteStore(location, options)
}

/** A location safe to print: the password of a URL is masked. */
export function describeLocation (location: string): string {
  return location.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1****@')
}
