/**
 * The store's query templates run on the SQLite connection itself (issue #26). Kysely's SQLite
 * driver runs each statement synchronously anyway, behind a mutex that hands its single connection
 * to one query or transaction at a time; a compiled template going through it spends more on that
 * machinery (the executor's promise layers, the connection providers, the mutex, the result's
 * BigInts) than SQLite spends on the statement. A template runs directly when that cannot change
 * what any transaction sees:
 *
 * - inside a transaction of this store: the transaction holds the only connection, so the
 *   statement runs in it, as Kysely would run it;
 * - outside one, while no transaction is open: a statement in autocommit mode, which Kysely would
 *   only have queued behind other single statements (each atomic, none in a transaction).
 *
 * Outside a transaction while one is open (between its `begin` and its `commit` or `rollback`), it
 * goes through Kysely and waits for the connection: run now, it would join that transaction.
 *
 * A write of several templates (`QueryTemplates.transact`: a clock step and the row it stamps)
 * runs as a whole transaction in one synchronous call under the same rule (no transaction open),
 * instead of a Kysely transaction with its connection handover, transaction object and a promise
 * per statement.
 */
import type { DatabaseConnection, SqliteDatabase, SqliteDialectConfig } from 'kysely'
import { SqliteDialect, SqliteDriver } from 'kysely'
import type { DirectExecutor, ExecuteNow } from '../query-templates.js'

/** Kysely's driver, counting the transactions open on its connection. */
class CountingDriver extends SqliteDriver {
  open = 0

  override async beginTransaction (connection: DatabaseConnection): Promise<void> {
    // Counted before `begin` runs, so no direct statement can slip in between.
    this.open++
    try {
      await super.beginTransaction(connection)
    } catch (error) {
      this.open--
      throw error
    }
  }

  override async commitTransaction (connection: DatabaseConnection): Promise<void> {
    // A failed commit leaves the transaction open; Kysely rolls it back next.
    await super.commitTransaction(connection)
    this.open--
  }

  override async rollbackTransaction (connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection)
    } finally {
      this.open--
    }
  }
}

/** Kysely's SQLite dialect over one given driver (the counting one). */
class CountingDialect extends SqliteDialect {
  constructor (config: SqliteDialectConfig, private readonly driver: CountingDriver) {
    super(config)
  }

  override createDriver (): SqliteDriver {
    return this.driver
  }
}

export interface DirectSqlite {
  /** The dialect to give Kysely. */
  readonly dialect: SqliteDialect
  /** Runs templates on `database` where the rules above allow it. */
  readonly executor: DirectExecutor
}

/**
 * @example
 * const direct = directSqlite(cachingDatabase(openSqliteConnection(path)))
 * const db = new Kysely<Schema>({ dialect: direct.dialect })
 * const store = createKyselyStore(db, sqliteDialect, { directExecutor: () => direct.executor })
 */
export function directSqlite (database: SqliteDatabase): DirectSqlite {
  const config: SqliteDialectConfig = { database }
  const driver = new CountingDriver(config)
  return {
    dialect: new CountingDialect(config, driver),
    executor: {
      execute (db, sql, parameters) {
        if (!db.isTransaction && driver.open > 0) return undefined
        return runOn(database, sql, parameters)
      },
      transaction (db, body) {
        if (db.isTransaction || driver.open > 0) return undefined
        return { value: wholeTransaction(database, body) }
      }
    }
  }
}

function runOn (database: SqliteDatabase, sql: string, parameters: readonly unknown[]): unknown[] {
  const statement = database.prepare(sql)
  if (statement.reader) return statement.all(parameters) as unknown[]
  statement.run(parameters)
  return []
}

/**
 * `body` between `begin` and `commit`, all in this call: no other statement can run on the
 * connection meanwhile, so none joins the transaction and none waits for it. A statement or
 * commit that fails rolls it back (a failed commit leaves it open) and the error goes on.
 */
function wholeTransaction<T> (database: SqliteDatabase, body: (execute: ExecuteNow) => T): T {
  runOn(database, 'begin', [])
  try {
    const value = body((sql, parameters) => runOn(database, sql, parameters))
    runOn(database, 'commit', [])
    return value
  } catch (error) {
    try {
      runOn(database, 'rollback', [])
    } catch {
      // Nothing open to roll back: SQLite already ended the transaction (it does on some errors).
    }
    throw error
  }
}
