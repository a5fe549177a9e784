/**
 * A bounded cache of better-sqlite3 prepared statements, keyed by SQL text. Kysely's SQLite
 * driver calls `database.prepare(sql)` for every query; preparing costs more than running most
 * of our statements, and a prepared statement is reusable (the driver's connection mutex runs
 * one statement at a time). The least recently used statement is dropped beyond `max`.
 */
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3'
import type { SqliteDatabase as KyselySqliteDatabase } from 'kysely'

export const DEFAULT_STATEMENT_CACHE_SIZE = 256

/**
 * The database as Kysely's `SqliteDialect` sees it, with `prepare` cached.
 *
 * @example
 * const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: cachingDatabase(new Database(path)) }) })
 */
export function cachingDatabase (database: SqliteDatabase, max = DEFAULT_STATEMENT_CACHE_SIZE): KyselySqliteDatabase {
  // A Map iterates in insertion order: re-inserting on a hit keeps the oldest entry first.
  const statements = new Map<string, Statement>()
  return {
    close () {
      statements.clear()
      database.close()
    },
    prepare (sql: string) {
      let statement = statements.get(sql)
      if (statement !== undefined) {
        statements.delete(sql)
      } else {
        statement = database.prepare(sql)
        if (statements.size >= max) statements.delete(statements.keys().next().value as string)
      }
      statements.set(sql, statement)
      return statement
    }
  }
}
