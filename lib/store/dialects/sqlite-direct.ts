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
 * runs as a whole transaction of its own instead of a Kysely transaction with its connection
 * handover, transaction object and a promise per statement: on the writer thread when the store
 * has one (sqlite-writer.ts), holding the connection's turn as a Kysely transaction would; else in
 * one synchronous call under the rule above (no transaction open). While the writer's
 * transaction is in flight, direct reads still run (they see the last commit) and direct writes
 * wait for the turn like everything that goes through Kysely.
 */
import type { DatabaseConnection, SqliteDatabase, SqliteDialectConfig } from 'kysely'
import { SqliteDialect, SqliteDriver } from 'kysely'
import type { DirectExecutor, TemplateStatement } from '../query-templates.js'
import type { SqliteWriter } from './sqlite-writer.js'

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
  /** Waits for the transaction in flight on the writer, then stops the writer (none: resolves). */
  stopWriter(): Promise<void>
}

/**
 * @example
 * const direct = directSqlite(cachingDatabase(openSqliteConnection(path)), startSqliteWriter(path, settings))
 * const db = new Kysely<Schema>({ dialect: direct.dialect })
 * const store = createKyselyStore(db, sqliteDialect, { directExecutor: () => direct.executor })
 */
export function directSqlite (database: SqliteDatabase, writer?: SqliteWriter): DirectSqlite {
  const config: SqliteDialectConfig = { database }
  const driver = new CountingDriver(config)
  /** Transactions in flight on the writer (each holds the connection's turn). */
  let flying = 0

  /** `statements` on the writer, in one message, holding the turn from before they go to after their answer. */
  const onWriter = async (writer: SqliteWriter, statements: TemplateStatement[]): Promise<unknown[][]> => {
    // Which return rows, from the main connection's (cached) statements.
    const readers = statements.map((s) => database.prepare(s.sql).reader)
    await driver.acquireConnection()
    flying++
    try {
      // Stopped or failed while this waited for its turn: the main connection writes it (the turn is ours).
      if (!writer.alive) return wholeTransaction(database, statements)
      return await writer.transaction(statements, readers)
    } finally {
      flying--
      await driver.releaseConnection()
    }
  }

  return {
    dialect: new CountingDialect(config, driver),
    executor: {
      execute (db, sql, parameters) {
        if (!db.isTransaction && driver.open > 0) return undefined
        if (flying > 0 && !db.isTransaction) {
          const statement = database.prepare(sql)
          // A write now would wait for the writer's lock on the event loop: it waits for the turn.
          return statement.reader ? statement.all(parameters) as unknown[] : undefined
        }
        return runOn(database, sql, parameters)
      },
      transaction (db, statements) {
        if (db.isTransaction) return undefined
        if (writer?.alive === true) return { rows: onWriter(writer, statements()) }
        if (driver.open > 0 || flying > 0) return undefined
        return { rows: wholeTransaction(database, statements()) }
      }
    },
    async stopWriter () {
      if (writer === undefined) return
      // The turn: every transaction in flight on the writer has ended once it is ours.
      await driver.acquireConnection()
      try {
        await writer.stop()
      } finally {
        await driver.releaseConnection()
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
 * `statements` between `begin` and `commit`, all in this call: no other statement can run on
 * the connection meanwhile, so none joins the transaction and none waits for it. A statement or
 * commit that fails rolls it back (a failed commit leaves it open) and the error goes on.
 */
function wholeTransaction (database: SqliteDatabase, statements: TemplateStatement[]): unknown[][] {
  runOn(database, 'begin', [])
  try {
    const rows = statements.map(({ sql, parameters }) => runOn(database, sql, parameters))
    runOn(database, 'commit', [])
    return rows
  } catch (error) {
    try {
      runOn(database, 'rollback', [])
    } catch {
      // Nothing open to roll back: SQLite already ended the transaction (it does on some errors).
    }
    throw error
  }
}
