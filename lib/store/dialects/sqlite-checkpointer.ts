/**
 * WAL checkpoints off the event loop (issue #26). SQLite copies the write-ahead log back into the
 * database file in a checkpoint, and by default the COMMIT that crosses `wal_autocheckpoint`
 * pages runs it, synchronously, on the thread that committed: devicehub's event loop. At 1,000
 * notifications/s that was a 10–20 ms stall every few seconds, and every push in flight waited
 * for it (enough of them to reach the p99 of a paced load).
 *
 * A worker thread holds its own connection to the file and runs `PRAGMA wal_checkpoint(PASSIVE)`
 * every `intervalMs`: PASSIVE never blocks the writer and never waits for it, so the main thread
 * keeps committing while pages are copied; with the log checkpointed, the next write starts it
 * over from the beginning. Measured in one process at 1,000 inserts/s over 20 s: the largest
 * insert latency 18–19 → 10–11 ms, the WAL file 16 → 7–8 MB. Under steady writes (hundreds of
 * commits a second) a checkpoint rarely finishes, since a commit lands while it syncs the log and
 * copies, and the log only starts over once the main connection's autocheckpoint (the backstop,
 * `WAL_CHECKPOINT_PAGES`) finishes one; the worker has copied nearly everything by then, so that
 * checkpoint is mostly its two fsyncs. Checkpointing again at once when the log grew meanwhile
 * (measured, issue #26) tripled the worker's fsyncs and, by starting the log over more often,
 * gave the event loop more of them (each new log's header is synced by the commit that writes it).
 *
 * If the worker cannot start or a checkpoint fails, it says so once (a process warning) and
 * stops: commits go back to checkpointing by themselves, as without it. Nothing is lost either
 * way; checkpoints only move pages that are already durable in the log.
 */
import { Worker } from 'node:worker_threads'
import { sqliteDriverModule } from './sqlite-driver.js'

/** How often the worker checkpoints (ms). */
export const CHECKPOINT_INTERVAL_MS = 200

export interface Checkpointer {
  /** Stops the worker and closes its connection; call it before the store's own connection closes. */
  stop(): Promise<void>
}

// Plain CommonJS run by the worker (`eval`): no loader, so it runs the same under tsx and from dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { path, driver, intervalMs } = workerData
const emitWarning = process.emitWarning
// Node 22 warns that node:sqlite is experimental; the main thread already loaded it quietly.
process.emitWarning = (warning, ...rest) => {
  if (!/SQLite is an experimental feature/.test(String(warning && warning.message || warning))) emitWarning.call(process, warning, ...rest)
}
const db = driver === 'node:sqlite' ? new (require('node:sqlite').DatabaseSync)(path) : new (require(driver))(path)
process.emitWarning = emitWarning
// Never wait for the writer's locks: a checkpoint that cannot go ahead now goes next time.
db.exec('PRAGMA busy_timeout = 0')
const timer = setInterval(() => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)')
  } catch (error) {
    if (/busy|locked/i.test(String(error && error.message))) return
    clearInterval(timer)
    parentPort.postMessage({ failed: String(error && error.message || error) })
  }
}, intervalMs)
parentPort.on('message', () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

/**
 * Starts background checkpoints of the SQLite file at `path` (a file in WAL mode, not `:memory:`).
 *
 * @example
 * const checkpointer = startCheckpointer('./devicehub.db')
 * // ... on close, before the main connection:
 * await checkpointer.stop()
 */
export function startCheckpointer (path: string, intervalMs = CHECKPOINT_INTERVAL_MS): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver: sqliteDriverModule(), intervalMs } })
  let warned = false
  const warn = (reason: string): void => {
    if (warned) return
    warned = true
    process.emitWarning(`background WAL checkpoints of ${path} stopped (${reason}); commits checkpoint instead`, 'DevicehubWarning')
  }
  // better-sqlite3's SqliteError reaches this thread as a plain object holding only its `code`.
  worker.on('error', (error: unknown) => {
    const { message, code } = (error ?? {}) as { message?: unknown, code?: unknown }
    warn(typeof message === 'string' ? message : typeof code === 'string' ? code : String(error))
  })
  worker.on('message', (message: { failed?: string }) => {
    if (message.failed !== undefined) warn(message.failed)
  })
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  // The worker must never keep the process alive (a store left open), nor crash it. After the
  // listeners: adding a 'message' listener refs the worker's port again.
  worker.unref()
  return {
    async stop () {
      worker.postMessage('stop')
      // A worker that does not answer (stuck in a checkpoint of a huge log) is ended; its connection closes with it.
      const timeout = setTimeout(() => { void worker.terminate() }, 5_000)
      await exited
      clearTimeout(timeout)
    }
  }
}
