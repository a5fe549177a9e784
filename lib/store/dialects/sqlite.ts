/**
 * SQLite through better-sqlite3: WAL (for files), foreign keys on, a busy timeout, and the
 * migrations run on open. `:memory:` gives a private in-memory database. The driver's major
 * version follows the Node.js line (`sqlite-driver.ts`).
 */
import { Kysely, SqliteDialect } from 'kysely'
import type { Durability } from '../durability.js'
import type { Database as Schema } from '../database.js'
import type { StoreDialect } from '../dialect.js'
import type { KyselyStore } from '../kysely-store.js'
import { createKyselyStore } from '../kysely-store.js'
import { migrateToLatest, sqliteMigrationDialect } from '../migrations/index.js'
import { loadSqliteDriver } from './sqlite-driver.js'
import { cachingDatabase } from './statement-cache.js'

export const sqliteDialect: StoreDialect = {
  name: 'sqlite',
  migrations: sqliteMigrationDialect,
  classifyError (error) {
    const code = (error as { code?: unknown } | null)?.code
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return 'unique'
    if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return 'foreign-key'
    return undefined
  }
}

export interface SqliteStoreOptions {
  /** Run pending migrations on open (default true). */
  migrate?: boolean
  /** Default `normal`; `full` for writes that must survive a power failure. */
  durability?: Durability
}

/**
 * Opens (and by default migrates) a SQLite store.
 *
 * @example
 * const store = await openSqliteStore('./devicehub.db')
 * const memory = await openSqliteStore(':memory:')
 */
export async function openSqliteStore (path: string, options: SqliteStoreOptions = {}): Promise<KyselyStore> {
  const Database = loadSqliteDriver()
  const database = new Database(path)
  try {
    if (path !== ':memory:' && path !== '') database.pragma('journal_mode = WAL')
    database.pragma('foreign_keys = ON')
    database.pragma('busy_timeout = 5000')
    database.pragma(`synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`)
    // Spec §1.7: `namePattern` / `loginPattern` are case-sensitive LIKE patterns, as on PostgreSQL.
    database.pragma('case_sensitive_like = ON')
  } catch (error) {
    database.close()
    throw error
  }
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: cachingDatabase(database) }) })
  if (options.migrate !== false) {
    try {
      await migrateToLatest(db as Kysely<unknown>, sqliteMigrationDialect)
    } catch (error) {
      await db.destroy()
      throw error
    }
  }
  return createKyselyStore(db, sqliteDialect)
}
