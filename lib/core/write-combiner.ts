/**
 * Group commit for one kind of write: calls that arrive while a batch is being written (or in
 * the same event-loop turn) go out together as the next batch, one statement for all, so N
 * writes share one round trip and one commit flush (see docs/architecture.md, "Message writes
 * on PostgreSQL"). With `concurrency` above 1 several batches are in flight at once, for writes
 * whose order between calls does not matter: their commits overlap, and the database flushes
 * them together. A batch that fails is written again item by item, so one bad item fails only
 * its own call.
 */

export interface WriteCombiner<I, O> {
  write(item: I): Promise<O>
}

export interface WriteCombinerOptions<I> {
  /** Largest batch (bounded statement size). */
  maxBatch: number
  /** Whether `item` may join `batch` (e.g. same NOTIFY channel, not the same row twice); a batch ends at the first item that may not. */
  canJoin?(batch: readonly I[], item: I): boolean
  /**
   * Batches in flight at once (default 1). Above 1, a later batch may finish first: only for
   * writes whose calls are independent (inserts), never for updates of one row.
   */
  concurrency?: number
}

interface Pending<I, O> {
  item: I
  resolve(value: O): void
  reject(error: unknown): void
}

/**
 * @example
 * const inserts = createWriteCombiner((rows: Row[]) => insertAll(rows), { maxBatch: 200 })
 * const record = await inserts.write(row)
 */
export function createWriteCombiner<I, O> (run: (items: I[]) => Promise<O[]>, options: WriteCombinerOptions<I>): WriteCombiner<I, O> {
  const queue: Array<Pending<I, O>> = []
  const concurrency = Math.max(1, options.concurrency ?? 1)
  let active = 0
  let scheduled = false

  // The longest prefix of the queue that may go together: calls are written in call order, so a
  // second update of one row can never overtake the first.
  const takeBatch = (): Array<Pending<I, O>> => {
    const items: I[] = []
    let n = 0
    while (n < queue.length && n < options.maxBatch) {
      const item = queue[n]!.item
      if (n > 0 && options.canJoin !== undefined && !options.canJoin(items, item)) break
      items.push(item)
      n++
    }
    return queue.splice(0, n)
  }

  // A `run` that throws instead of rejecting must not stop the combiner: every call goes through a promise.
  const runSafely = (items: I[]): Promise<O[]> => Promise.resolve().then(() => run(items))

  async function writeBatch (batch: Array<Pending<I, O>>): Promise<void> {
    try {
      const results = await runSafely(batch.map((p) => p.item))
      batch.forEach((p, i) => p.resolve(results[i]!))
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error)
        return
      }
      for (const p of batch) await runSafely([p.item]).then((results) => p.resolve(results[0]!), p.reject)
    }
  }

  /** One lane: writes batches until the queue is empty. */
  async function lane (): Promise<void> {
    try {
      while (queue.length > 0) await writeBatch(takeBatch())
    } catch (error) {
      // Only a throwing `canJoin` gets here: fail what is queued rather than leave it hanging.
      for (const p of queue.splice(0)) p.reject(error)
    } finally {
      active--
    }
  }

  /** Starts lanes for what is queued, up to `concurrency`. */
  function start (): void {
    scheduled = false
    while (active < concurrency && queue.length > 0) {
      active++
      void lane()
    }
  }

  return {
    write (item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject })
        if (active >= concurrency || scheduled) return
        scheduled = true
        // Let the calls made in the same turn join the first batch.
        setImmediate(start)
      })
    }
  }
}
