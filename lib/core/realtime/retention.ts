/**
 * R8 retention: commands and notifications older than the retention period are deleted in the
 * background, in small batches with a yield between them, so pruning never blocks requests.
 */
import type { Logger, Store } from '../ports.js'
import type { Clock } from '../time.js'

export const DEFAULT_RETENTION_MS = 30 * 86_400_000

export interface RetentionPruner {
  /** Starts the periodic pruning (the timer does not keep the process alive). */
  start(): void
  /** Stops the timer and waits for a running pass to finish. */
  stop(): Promise<void>
  /** One full pass now; returns how many rows were deleted. */
  pruneOnce(): Promise<number>
}

export interface RetentionOptions {
  store: Store
  clock: Clock
  logger: Logger
  retentionMs: number
  /** Between passes (default: a tenth of the retention, between 1 s and 1 h). */
  intervalMs?: number
  /** Called after each scheduled pass with the rows it deleted (monitoring). */
  onPass?: (deleted: number) => void
  /** Called when a scheduled pass fails (monitoring). */
  onFailure?: () => void
  /** Rows per delete statement (default 500). */
  batchSize?: number
}

/**
 * @example
 * const pruner = createRetentionPruner({ store, clock, logger, retentionMs: 30 * 86_400_000 })
 * pruner.start()
 * await pruner.stop()
 */
export function createRetentionPruner (options: RetentionOptions): RetentionPruner {
  const { store, clock, logger, retentionMs } = options
  const batch = options.batchSize ?? 500
  const interval = options.intervalMs ?? Math.min(3_600_000, Math.max(1000, Math.floor(retentionMs / 10)))
  let timer: NodeJS.Timeout | undefined
  let running: Promise<number> | undefined
  let stopped = false

  const yieldToRequests = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

  async function pass (): Promise<number> {
    const before = clock.now() - retentionMs
    let total = 0
    for (const repo of [store.notifications, store.commands]) {
      for (;;) {
        if (stopped) return total
        const deleted = await repo.prune(before, batch)
        total += deleted
        if (deleted < batch) break
        await yieldToRequests()
      }
    }
    return total
  }

  function pruneOnce (): Promise<number> {
    running ??= pass().finally(() => { running = undefined })
    return running
  }

  function schedule (): void {
    if (stopped) return
    timer = setTimeout(() => {
      pruneOnce().then((n) => {
        options.onPass?.(n)
        if (n > 0) logger.debug({ deleted: n }, 'retention: pruned old commands and notifications')
      }, (error: unknown) => {
        options.onFailure?.()
        logger.warn({ err: error }, 'retention: pruning failed')
      }).finally(schedule)
    }, interval)
    timer.unref()
  }

  return {
    start () {
      if (timer === undefined && !stopped) schedule()
    },
    async stop () {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      await running?.catch(() => undefined)
    },
    pruneOnce
  }
}
