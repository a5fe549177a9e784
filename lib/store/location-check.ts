/**
 * What is wrong with a database location, said in the operator's words before anything opens
 * it: an unsupported URL, a directory that does not exist, a directory given as the file, a
 * missing file where one must exist. Otherwise the first error would be a raw `ENOENT` on the
 * lock file, or a driver message about a path the operator never typed.
 */
import { existsSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

const URL_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i
const POSTGRES_URL = /^postgres(ql)?:\/\//i

/** A location safe to print: the password of a URL is masked. */
export function describeLocation (location: string): string {
  return location.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1****@')
}

/** The one message for a database that must exist and does not (`token`, `user`). */
export function missingDatabaseMessage (location: string): string {
  return `No database at ${describeLocation(location)}: check --db (or DEVICEHUB_DB); ` +
    '\'devicehub serve\' or \'devicehub migrate\' creates a new one'
}

/**
 * Throws one clear line when `location` cannot be a devicehub database; returns quietly for a
 * PostgreSQL URL, `:memory:`, or a SQLite path that can be opened (or created).
 *
 * @example
 * checkStoreLocation('mysql://db/x')        // throws: Unsupported database URL mysql://db/x: ...
 * checkStoreLocation('/no/such/dir/x.db')   // throws: ... the directory /no/such/dir does not exist
 * checkStoreLocation('')                    // throws: The database location is empty ...
 */
export function checkStoreLocation (location: string, options: { mustExist?: boolean } = {}): void {
  // An empty DEVICEHUB_DB= would open a throwaway database and lose every write at exit.
  if (location.trim() === '') {
    throw new Error('The database location is empty (--db or DEVICEHUB_DB): give a SQLite file path, :memory:, ' +
      'or a postgres:// URL (unset DEVICEHUB_DB for the default ./devicehub.db)')
  }
  if (POSTGRES_URL.test(location)) return
  const scheme = URL_SCHEME.exec(location)
  if (scheme !== null) {
    throw new Error(`Unsupported database URL ${describeLocation(location)}: devicehub stores its data in SQLite ` +
      '(a file path, or :memory:) or in PostgreSQL (a postgres:// or postgresql:// URL)')
  }
  if (location === ':memory:' || location.startsWith('file:')) return
  const file = resolve(location)
  if (existsSync(file)) {
    if (statSync(file).isDirectory()) {
      throw new Error(`${location} is a directory, not a database file: give a file path such as ${resolve(file, 'devicehub.db')}`)
    }
    return
  }
  if (options.mustExist === true) throw new Error(missingDatabaseMessage(location))
  const directory = dirname(file)
  if (!existsSync(directory)) {
    throw new Error(`Cannot create the database ${location}: the directory ${directory} does not exist ` +
      '(create it first, or choose another path)')
  }
  if (!statSync(directory).isDirectory()) {
    throw new Error(`Cannot create the database ${location}: ${directory} is not a directory`)
  }
}
