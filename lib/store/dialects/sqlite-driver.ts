/**
 * The SQLite driver for this Node.js line, behind the few calls the store makes (`SqliteConnection`).
 *
 * - Node 22.13+ (22, 24, 26): Node's own `node:sqlite` (`DatabaseSync`). Nothing native is
 *   installed or built, and its statements are freed safely by the garbage collector.
 * - Node 20 has no `node:sqlite`: better-sqlite3 12, through the local optional package
 *   `devicehub-sqlite-node20` (packages/sqlite-node20). That package's `engines` is `20.x`, so npm
 *   skips it, and better-sqlite3 with it, on every other line: nothing is downloaded or compiled there.
 *   (better-sqlite3 12 aborts on Node 24+ when the GC finalises a statement; 13 segfaults on Node 20.)
 *
 * Only the driver chosen here is ever loaded.
 */
import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

/** A SQLite connection as the store uses it: Kysely's `prepare` (all/run/iterate/reader), `exec`, `close`. */
export interface SqliteConnection extends SqliteDatabase {
  /** Runs SQL without results (PRAGMA settings, schema). */
  exec (sql: string): void
}

export type SqliteDriverName = 'node:sqlite' | 'devicehub-sqlite-node20'

/** The first Node.js 22 release with `node:sqlite` unflagged; 23 and later all have it. */
const NODE_SQLITE_FROM = [22, 13] as const

/**
 * The driver for a Node.js version (default: this process).
 *
 * @example
 * sqliteDriverName('20.20.2') // 'devicehub-sqlite-node20'
 * sqliteDriverName('24.21.0') // 'node:sqlite'
 */
export function sqliteDriverName (nodeVersion = process.versions.node): SqliteDriverName {
  const [major = 0, minor = 0] = nodeVersion.split('.').map((part) => Number.parseInt(part, 10))
  const builtIn = major > NODE_SQLITE_FROM[0] || (major === NODE_SQLITE_FROM[0] && minor >= NODE_SQLITE_FROM[1])
  return builtIn ? 'node:sqlite' : 'devicehub-sqlite-node20'
}

/** What the store uses of `node:sqlite` (its types are not in @types/node 20). */
interface NodeSqliteStatement {
  /** Node 22.16+ and 23.11+ only. */
  columns?: () => unknown[]
  all (...parameters: unknown[]): unknown[]
  run (...parameters: unknown[]): { changes: number | bigint, lastInsertRowid: number | bigint }
  iterate (...parameters: unknown[]): IterableIterator<unknown>
}
interface NodeSqliteDatabase {
  prepare (sql: string): NodeSqliteStatement
  exec (sql: string): void
  close (): void
}
interface NodeSqlite { DatabaseSync: new (path: string) => NodeSqliteDatabase }

type Open = (path: string) => SqliteConnection

const require = createRequire(import.meta.url)
let loaded: Open | undefined

/**
 * Opens a connection with this line's driver (loaded once); a missing driver is a plain error
 * that names it, not a crash.
 *
 * @example
 * const connection = openSqliteConnection(':memory:')
 * connection.prepare('select 1 as x').all([]) // [{ x: 1 }]
 */
export function openSqliteConnection (path: string): SqliteConnection {
  loaded ??= loadDriver(sqliteDriverName())
  return loaded(path)
}

/**
 * What another thread requires to open the same driver: `node:sqlite`, or the file of the Node 20
 * driver this process would load (sqlite-checkpointer.ts).
 *
 * @example
 * new Worker(source, { eval: true, workerData: { driver: sqliteDriverModule() } })
 */
export function sqliteDriverModule (): string {
  if (sqliteDriverName() === 'node:sqlite') return 'node:sqlite'
  try {
    return require.resolve('devicehub-sqlite-node20')
  } catch {
    return require.resolve('better-sqlite3')
  }
}

function loadDriver (name: SqliteDriverName): Open {
  try {
    if (name === 'node:sqlite') {
      const { DatabaseSync } = requireQuietly<NodeSqlite>('node:sqlite')
      return (path) => nodeSqliteConnection(new DatabaseSync(path))
    }
    const Database = requireNode20Driver()
    // better-sqlite3's statements take Kysely's parameter array as they are.
    return (path) => new Database(path)
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    const fix = name === 'node:sqlite'
      ? 'use Node.js 22.13 or later'
      : 'reinstall with npm ci under this Node.js, or, where devicehub came from the registry, npm install better-sqlite3@12'
    throw new Error(`the SQLite driver ${name} for Node.js ${process.versions.node} cannot be loaded (${fix}): ${reason}`,
      { cause: error })
  }
}

/**
 * The clone's local package, else a better-sqlite3 12 installed beside devicehub: an install from
 * the registry cannot carry the local package, so on Node 20 the user adds the driver themself.
 */
function requireNode20Driver (): typeof BetterSqlite3 {
  try {
    return require('devicehub-sqlite-node20') as typeof BetterSqlite3
  } catch (error) {
    try {
      return require('better-sqlite3') as typeof BetterSqlite3
    } catch {
      throw error
    }
  }
}

/**
 * Before Node 22.16 `node:sqlite` cannot list a statement's columns: a statement reads when it is
 * a query or returns rows (the statements devicehub and Kysely's migrator prepare).
 */
const READER_SQL = /^\s*(select|with|values|pragma\s+\w+\s*;?\s*$)|\breturning\b/i

/** `node:sqlite` as Kysely's SqliteDatabase: parameters spread, `reader` from the result columns. */
function nodeSqliteConnection (database: NodeSqliteDatabase): SqliteConnection {
  return {
    exec: (sql) => { database.exec(sql) },
    close: () => { database.close() },
    prepare (sql): SqliteStatement {
      const statement = database.prepare(sql)
      return {
        // better-sqlite3's definition too: a statement that returns columns (select, returning, some pragmas).
        reader: statement.columns !== undefined ? statement.columns().length > 0 : READER_SQL.test(sql),
        all: (parameters) => statement.all(...parameters),
        run: (parameters) => statement.run(...parameters),
        iterate: (parameters) => statement.iterate(...parameters)
      }
    }
  }
}

/** node:sqlite reports SQLite's extended result code as a number; better-sqlite3 by its name. */
const RESULT_CODE_NAMES: Readonly<Record<number, string>> = {
  5: 'SQLITE_BUSY',
  26: 'SQLITE_NOTADB',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE'
}

/**
 * SQLite's result code name of an error from either driver (`SQLITE_CONSTRAINT_UNIQUE`, ...), or
 * undefined for an error that is not SQLite's (or a code the store does not tell apart).
 *
 * @example
 * sqliteErrorCode(error) === 'SQLITE_CONSTRAINT_UNIQUE'
 */
export function sqliteErrorCode (error: unknown): string | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown, errcode?: unknown }
  if (code === 'ERR_SQLITE_ERROR') return typeof errcode === 'number' ? RESULT_CODE_NAMES[errcode] : undefined
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined
}

const EXPERIMENTAL_SQLITE = /^SQLite is an experimental feature/

/**
 * Requires `node:sqlite` without Node 22's one ExperimentalWarning about it (24 and 26 emit none).
 * Only that warning, only while loading: every other warning still reaches the process.
 */
function requireQuietly<T> (id: string): T {
  const emitWarning = process.emitWarning
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    const message = typeof warning === 'string' ? warning : warning.message
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type
    const name = typeof warning === 'string' ? type : warning.name
    if (name === 'ExperimentalWarning' && EXPERIMENTAL_SQLITE.test(message)) return
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest)
  } as typeof process.emitWarning
  try {
    return require(id) as T
  } finally {
    process.emitWarning = emitWarning
  }
}
