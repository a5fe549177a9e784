/**
 * Which better-sqlite3 this Node.js line runs. better-sqlite3 12 (the raw V8/ObjectWrap addon)
 * aborts on Node 24+ when the garbage collector finalises a prepared statement; better-sqlite3 13
 * (Node-API, prebuilt binaries inside the package) is correct on 22+ but crashes on Node 20.
 * Both are optional dependencies: `better-sqlite3` (13, installed on 22+ only, by its engines) and
 * the alias `better-sqlite3-node20` (12). Only the one chosen here is ever loaded.
 */
import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

/** The better-sqlite3 constructor (both majors share this API). */
export type SqliteDriver = typeof BetterSqlite3

export type SqliteDriverPackage = 'better-sqlite3' | 'better-sqlite3-node20'

/** The first Node.js major that runs better-sqlite3 13. */
const NODE_API_DRIVER_FROM = 22

/**
 * The package for a Node.js version (default: this process).
 *
 * @example
 * sqliteDriverPackage('20.20.2') // 'better-sqlite3-node20'
 * sqliteDriverPackage('24.21.0') // 'better-sqlite3'
 */
export function sqliteDriverPackage (nodeVersion = process.versions.node): SqliteDriverPackage {
  return Number.parseInt(nodeVersion, 10) >= NODE_API_DRIVER_FROM ? 'better-sqlite3' : 'better-sqlite3-node20'
}

const require = createRequire(import.meta.url)
// A memo of the loaded module (the same for the whole process).
let loaded: SqliteDriver | undefined

/**
 * Loads (once) the driver for this process's Node.js line; a missing package is a plain error
 * that names it, not a crash.
 *
 * @example
 * const Database = loadSqliteDriver()
 * const database = new Database(':memory:')
 */
export function loadSqliteDriver (): SqliteDriver {
  if (loaded !== undefined) return loaded
  const name = sqliteDriverPackage()
  try {
    loaded = require(name) as SqliteDriver
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw new Error(`the SQLite driver ${name} for Node.js ${process.versions.node} cannot be loaded ` +
      `(reinstall with npm ci under this Node.js): ${reason}`, { cause: error })
  }
  return loaded
}
