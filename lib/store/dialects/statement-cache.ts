/**
 * A bounded cache of prepared statements (either driver, see sqlite-driver.ts), keyed by SQL text.
 * Kysely's SQLite driver calls `database.prepare(sql)` for every query; preparing costs more than
 * running most of our statements, and a prepared statement is reusable (the driver's connection
 * mutex runs one statement at a time). The least recently used statement is dropped beyond `max`.
 */
import type { SqliteDatabase as KyselySqliteDatabase, SqliteStatement } from 'kysely'
import type { SqliteConnection } from './sqlite-driver.js'

export const DEFAULT_STATEMENT_CACHE_SIZE = 256

/**
 * Schema changes (migrations, tests). Node 22's node:sqlite keeps a statement's result column names
 * from its first run, so a cached `select *` would miss a column added since: a schema change drops
 * every cached statement, and is not cached itself.
 */
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\s/i

/**
 * The database as Kysely's `SqliteDialect` sees it, with `prepare` cached.
 *
 * @example
 * const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: cachingDatabase(openSqliteConnection(path)) }) })
 */
export function cachingDatabase (database: SqliteConnection, max = DEFAULT_STATEMENT_CACHE_SIZE): KyselySqliteDatabase {
  // A Map iterates in insertion order: re-inserting on a hit keeps the oldest entry first.
  const statements = new Map<string, SqliteStatement>()
  return {
    close () {
      statements.clear()
      database.close()
    },
    prepare (sql: string) {
      if (SCHEMA_CHANGE.test(sql)) {
        statements.clear()
        return database.prepare(sql)
      }
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
