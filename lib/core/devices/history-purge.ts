/**
 * Deleted means gone (issue #16): the histories of deleted devices (queued in the delete's
 * transaction, see `PurgeRepository`) are removed in the background, in batches with a yield
 * between them, so a device with a million notifications is deleted at once and its rows go
 * without blocking requests. Reads by device id never see a queued history meanwhile.
 */
import type { Logger, Store } from '../ports.js'

export interface HistoryPurger {
  /** Starts a run soon (idempotent while one runs: it runs once more afterwards). */
  kick(): void
  /** One run to completion (tests, CLI). Returns the rows deleted. */
  runOnce(): Promise<number>
  /** Stops after the current batch and waits for it. */
  stop(): Promise<void>
}

export interface HistoryPurgerOptions {
  store: Store
  logger: Logger
  /** Rows per delete statement and table (default 500). */
  batchSize?: number
}

/**
 * @example
 * const purger = createHistoryPurger({ store, logger })
 * await store.devices.delete('sensor-1')
 * purger.kick()
 */
export function createHistoryPurger ({ store, logger, batchSize = 500 }: HistoryPurgerOptions): HistoryPurger {
  let running: Promise<number> | undefined
  let again = false
  let stopped = false
  const yieldToRequests = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

  async function run (): Promise<number> {
    let total = 0
    for (;;) {
      const entries = await store.purges.pending(20)
      if (entries.length === 0) return total
      for (const entry of entries) {
        for (;;) {
          if (stopped) return total
          const deleted = await store.purges.purgeBatch(entry, batchSize)
          total += deleted
          if (deleted === 0) break
          await yieldToRequests()
        }
        await store.purges.done(entry.id)
      }
    }
  }

  function runOnce (): Promise<number> {
    if (running !== undefined) {
      again = true
      return running
    }
    running = run().finally(() => {
      running = undefined
      if (again && !stopped) {
        again = false
        purger.kick()
      }
    })
    return running
  }

  const purger: HistoryPurger = {
    kick () {
      if (stopped) return
      runOnce().then((n) => {
        if (n > 0) logger.debug({ deleted: n }, 'purge: removed the history of deleted devices')
      }, (error: unknown) => {
        logger.warn({ err: error }, 'purge: removing the history of deleted devices failed (retried at the next delete or start)')
      })
    },
    runOnce,
    async stop () {
      stopped = true
      await running?.catch(() => undefined)
    }
  }
  return purger
}
