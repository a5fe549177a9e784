/**
 * Commits of other processes on a SQLite file: the CLI (`devicehub user passwd` on the file a
 * server runs on), or a second process of a host's own. They ring no bell in this process, so a
 * password changed there would leave this process's open waits delivering under the revoked
 * tokens. SQLite counts them for us: `PRAGMA data_version` on a connection changes when another
 * connection committed since (its own commits, and the checkpointer's PASSIVE checkpoints, leave
 * it as it is; a checkpoint that truncates the log moves it, which costs a needless resync only).
 * Asking costs 8.7 µs (better-sqlite3, mean of 10,000 asks), four times a second.
 */
import type { SqliteDatabase } from 'kysely'

/** How often the connection asks whether another one committed (ms): the delay before a CLI change reaches open waits. */
export const OTHER_WRITERS_INTERVAL_MS = 250

/** Watches one connection; `watch` registers a listener and returns the function that removes it (idempotent). */
export interface OtherWriters {
  watch(listener: () => void): () => void
  /** Stops asking, for good (the connection is closing). */
  stop(): void
}

/**
 * @example
 * const writers = watchOtherWriters(connection)
 * const off = writers.watch(() => console.log('another process committed'))
 */
export function watchOtherWriters (database: SqliteDatabase, intervalMs = OTHER_WRITERS_INTERVAL_MS): OtherWriters {
  const listeners = new Set<() => void>()
  const statement = database.prepare('PRAGMA data_version')
  const version = (): unknown => (statement.all([]) as Array<{ data_version: unknown }>)[0]?.data_version
  let timer: NodeJS.Timeout | undefined
  let seen: unknown
  let stopped = false

  const tick = (): void => {
    let now: unknown
    try {
      now = version()
    } catch {
      // The connection closed under the timer (a host closing the store without unwatching).
      stopTimer()
      return
    }
    if (now === seen) return
    seen = now
    for (const listener of [...listeners]) {
      try {
        listener()
      } catch {
        // One listener's failure must not keep the others from hearing.
      }
    }
  }
  const stopTimer = (): void => {
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
  }

  return {
    watch (listener) {
      if (stopped) return () => {}
      const own = (): void => listener()
      if (listeners.size === 0) {
        seen = version()
        timer = setInterval(tick, intervalMs)
        timer.unref()
      }
      listeners.add(own)
      return () => {
        if (!listeners.delete(own) || listeners.size > 0) return
        stopTimer()
      }
    },
    stop () {
      stopped = true
      listeners.clear()
      stopTimer()
    }
  }
}
