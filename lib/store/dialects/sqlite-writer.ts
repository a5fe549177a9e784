/**
 * The message writes' SQLite work on a worker thread (issue #26). A notification insert spent a
 * fifth of the event loop's busy time in SQLite itself (the multi-row insert, its three indexes,
 * the commit), while the machine's second core was partly idle. The writer is a worker thread
 * with its own connection to the same file; sqlite-direct.ts sends it a whole write transaction
 * of query templates in one message, and the main thread goes on with requests meanwhile.
 *
 * It changes nothing about who writes when: a transaction on the writer holds the main
 * connection's turn (Kysely's connection mutex) from its first statement to its commit, so it
 * queues behind and before the main connection's transactions exactly as one of them would, and
 * commits still follow stamps. The main connection meanwhile runs only reads (WAL: they see the
 * last commit, never the writer's uncommitted rows), never a write: a write would wait for the
 * writer's lock on the event loop, while the writer waits for the event loop's next statement.
 *
 * The writer's connection is opened as the main one (synchronous, foreign keys, busy timeout). If
 * the worker cannot start or dies, the transaction in flight fails (SQLite rolls back what a
 * closed connection left open) and every later one runs on the main connection, as without it.
 */
import { Worker } from 'node:worker_threads'
import { sqliteDriverModule } from './sqlite-driver.js'

/** What the writer's connection is set to; the same as the main connection's. */
export interface SqliteWriterSettings {
  synchronous: 'NORMAL' | 'FULL'
}

export interface SqliteWriter {
  /** False once the worker failed or stopped: write on the main connection instead. */
  readonly alive: boolean
  /**
   * Runs `statements` as one transaction on the writer's connection (rolled back if one fails)
   * and answers each one's rows (`readers[i]`: whether statement i returns rows).
   */
  transaction(statements: ReadonlyArray<{ sql: string, parameters: readonly unknown[] }>, readers: readonly boolean[]): Promise<unknown[][]>
  /** Stops the worker once the transactions sent are answered, and closes its connection. */
  stop(): Promise<void>
}

type Request =
  | { kind: 'transaction', sql: string[], parameters: Array<readonly unknown[]>, readers: readonly boolean[] }
  | { kind: 'stop' }

type Reply = { rows: unknown[][] } | { error: { message: string, code: unknown, errcode: unknown } }

// Plain CommonJS run by the worker (`eval`), as the checkpointer's: the same under tsx and from dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { path, driver, synchronous } = workerData
const emitWarning = process.emitWarning
process.emitWarning = (warning, ...rest) => {
  if (!/SQLite is an experimental feature/.test(String(warning && warning.message || warning))) emitWarning.call(process, warning, ...rest)
}
const db = driver === 'node:sqlite' ? new (require('node:sqlite').DatabaseSync)(path) : new (require(driver))(path)
process.emitWarning = emitWarning
db.exec('PRAGMA foreign_keys = ON')
db.exec('PRAGMA busy_timeout = 5000')
db.exec('PRAGMA synchronous = ' + synchronous)
// Prepared statements by text, the oldest dropped beyond 256 (as the main connection's cache).
function statementCache () {
  const statements = new Map()
  return (sql) => {
    let statement = statements.get(sql)
    if (statement === undefined) {
      if (statements.size >= 256) statements.delete(statements.keys().next().value)
      statements.set(sql, statement = db.prepare(sql))
    }
    return statement
  }
}
const prepare = statementCache()
parentPort.on('message', (request) => {
  if (request.kind === 'stop') {
    db.close()
    parentPort.close()
    return
  }
  const rows = []
  try {
    db.exec('begin')
    for (let i = 0; i < request.sql.length; i++) {
      const statement = prepare(request.sql[i])
      if (request.readers[i]) {
        rows.push(statement.all(...request.parameters[i]))
      } else {
        statement.run(...request.parameters[i])
        rows.push([])
      }
    }
    db.exec('commit')
  } catch (error) {
    // A failed commit leaves the transaction open; some errors end it already.
    try { db.exec('rollback') } catch {}
    const { message, code, errcode } = error || {}
    parentPort.postMessage({ error: { message: String(message || error), code, errcode } })
    return
  }
  parentPort.postMessage({ rows })
})
`

/**
 * Starts the writer of the SQLite file at `path` (a file in WAL mode whose schema is migrated).
 *
 * @example
 * const writer = startSqliteWriter('./devicehub.db', { synchronous: 'NORMAL' })
 * const [rows] = await writer.transaction([{ sql: 'insert into t (x) values (?) returning id', parameters: [1] }], [true])
 */
export function startSqliteWriter (path: string, settings: SqliteWriterSettings): SqliteWriter {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver: sqliteDriverModule(), ...settings } })
  // Answers come in the order the requests went: one queue of what waits for them.
  const waiting: Array<{ resolve(rows: unknown[][]): void, reject(error: Error): void }> = []
  let alive = true
  let failure: Error | undefined
  const fail = (error: Error): void => {
    if (!alive) return
    alive = false
    failure = error
    for (const w of waiting.splice(0)) w.reject(error)
  }
  const settled = (): void => {
    // Refed only while a transaction waits for its answer: never keeps the process alive otherwise.
    if (waiting.length === 0) worker.unref()
  }
  worker.on('message', (reply: Reply) => {
    const w = waiting.shift()
    settled()
    if ('rows' in reply) w?.resolve(reply.rows)
    else w?.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code, errcode: reply.error.errcode }))
  })
  // better-sqlite3's SqliteError reaches this thread as a plain object holding only its `code`.
  worker.on('error', (error: unknown) => {
    const { message, code } = (error ?? {}) as { message?: unknown, code?: unknown }
    const reason = typeof message === 'string' ? message : typeof code === 'string' ? code : String(error)
    process.emitWarning(`the SQLite writer thread of ${path} failed (${reason}); writes run on the event loop`, 'DevicehubWarning')
    fail(new Error(`the SQLite writer thread failed: ${reason}`))
  })
  const exited = new Promise<void>((resolve) => worker.once('exit', () => {
    fail(new Error('the SQLite writer thread stopped'))
    resolve()
  }))
  // After the listeners: adding a 'message' listener refs the worker's port again.
  worker.unref()

  return {
    get alive () {
      return alive
    },
    transaction (statements, readers) {
      if (!alive) return Promise.reject(failure)
      return new Promise((resolve, reject) => {
        if (waiting.length === 0) worker.ref()
        waiting.push({ resolve, reject })
        worker.postMessage({
          kind: 'transaction', sql: statements.map((s) => s.sql), parameters: statements.map((s) => s.parameters), readers
        } satisfies Request)
      })
    },
    async stop () {
      if (!alive) return
      worker.postMessage({ kind: 'stop' } satisfies Request)
      // A worker that does not answer is ended; its connection closes with it.
      const timeout = setTimeout(() => { void worker.terminate() }, 5_000)
      await exited
      clearTimeout(timeout)
    }
  }
}
