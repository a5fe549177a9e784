/**
 * SQLite (node:sqlite; better-sqlite3 on Node 20: `sqlite-driver.ts`): WAL (for files), foreign
 * keys on, a busy timeout, and the migrations run on open. `:memory:` gives a private in-memory
 * database.
 */
import { Kysely } from 'kysely'
import type { Durability } from '../durability.js'
import type { Database as Schema } from '../database.js'
import type { StoreDialect } from '../dialect.js'
import type { KyselyStore } from '../kysely-store.js'
import { createKyselyStore } from '../kysely-store.js'
import { migrateToLatest, sqliteMigrationDialect } from '../migrations/index.js'
import { watchOtherWriters } from './sqlite-other-writers.js'
import { startCheckpointer } from './sqlite-checkpointer.js'
import { directSqlite } from './sqlite-direct.js'
import { openSqliteConnection, sqliteErrorCode } from './sqlite-driver.js'
import { cachingDatabase } from './statement-cache.js'

export const sqliteDialect: StoreDialect = {
  name: 'sqlite',
  templatePrefix: '',
  migrations: sqliteMigrationDialect,
  classifyError (error) {
    const code = sqliteErrorCode(error)
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

/** WAL pages after which a commit checkpoints (SQLite's default: 1,000). */
export const WAL_CHECKPOINT_PAGES = 16_000

/**
 * Opens (and by default migrates) a SQLite store.
 *
 * @example
 * const store = await openSqliteStore('./devicehub.db')
 * const memory = await openSqliteStore(':memory:')
 */
export async function openSqliteStore (path: string, options: SqliteStoreOptions = {}): Promise<KyselyStore> {
  const database = openSqliteConnection(path)
  const isFile = path !== ':memory:' && path !== ''
  try {
    if (isFile) {
      database.exec('PRAGMA journal_mode = WAL')
      // The checkpoint that copies the WAL into the file runs inside the COMMIT that crosses this
      // many pages, on the event loop. SQLite's 1,000 pages made one every second or so at 1,000
      // notifications/s, each a stall every push in flight waited for: at 4,000, hot pages (the
      // per-device index leaves) are copied once for four times as many writes, and a 1,000/s
      // insert -> push p99 went from 6.2 to 3.6-4.0 ms over 20 s. Since then a worker thread
      // checkpoints every 200 ms (sqlite-checkpointer.ts), but under steady writes its checkpoints
      // rarely finish (a commit lands while it syncs and copies), so the log starts over only
      // after the commit crossing this many pages finishes it, with its two fsyncs, on the event
      // loop. At 4,000 that was every 1-1.5 s in the paced round trip (67-74 fsyncs on the event
      // loop in 20 s); at 16,000 (a log of up to 64 MB) 19-28, and the round trip's p99 8.8
      // instead of 9.7 ms (medians of five runs, issue #26).
      database.exec(`PRAGMA wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`)
    }
    database.exec('PRAGMA foreign_keys = ON')
    database.exec('PRAGMA busy_timeout = 5000')
    database.exec(`PRAGMA synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`)
    // Spec §1.7: `namePattern` / `loginPattern` are case-sensitive LIKE patterns, as on PostgreSQL.
    database.exec('PRAGMA case_sensitive_like = ON')
  } catch (error) {
    database.close()
    throw error
  }
  const direct = directSqlite(cachingDatabase(database))
  const db = new Kysely<Schema>({ dialect: direct.dialect })
  if (options.migrate !== false) {
    try {
      await migrateToLatest(db as Kysely<unknown>, sqliteMigrationDialect)
    } catch (error) {
      await db.destroy()
      throw error
    }
  }
  const otherWriters = isFile ? watchOtherWriters(database) : undefined
  const store = createKyselyStore(db, sqliteDialect, { directExecutor: () => direct.executor, watchOtherWriters: otherWriters?.watch })
  if (!isFile) return store
  const checkpointer = startCheckpointer(path)
  const close = store.close.bind(store)
  return Object.assign(store, {
    async close () {
      otherWriters?.stop()
      // First: the main connection, closing last, checkpoints what is left and removes the log.
      await checkpointer.stop()
      await close()
    }
  })
}
