/**
 * Group commit for one kind of write: calls that arrive while a batch is being written (or in
 * the same event-loop turn) go out together as the next batch, one statement for all. On
 * PostgreSQL every message write takes the message clock's row lock until its commit is
 * flushed, so writing N rows per lock instead of one is what lets writes scale (see
 * docs/architecture.md, "Message clock"). A batch that fails is written again item by item,
 * so one bad item fails only its own call.
 */

export interface WriteCombiner<I, O> {
  write(item: I): Promise<O>
}

export interface WriteCombinerOptions<I> {
  /** Largest batch (bounded statement size). */
  maxBatch: number
  /** Whether `item` may join `batch` (e.g. same NOTIFY channel, not the same row twice); a batch ends at the first item that may not. */
  canJoin?(batch: readonly I[], item: I): boolean
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
  let active = false

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

  async function flush (): Promise<void> {
    try {
      while (queue.length > 0) {
        const batch = takeBatch()
        try {
          const results = await runSafely(batch.map((p) => p.item))
          batch.forEach((p, i) => p.resolve(results[i]!))
        } catch (error) {
          if (batch.length === 1) {
            batch[0]!.reject(error)
            continue
          }
          for (const p of batch) await runSafely([p.item]).then((results) => p.resolve(results[0]!), p.reject)
        }
      }
    } catch (error) {
      // Only a throwing `canJoin` gets here: fail what is queued rather than leave it hanging.
      for (const p of queue.splice(0)) p.reject(error)
    } finally {
      active = false
    }
  }

  return {
    write (item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject })
        if (active) return
        active = true
        // Let the calls made in the same turn join the first batch.
        setImmediate(() => { void flush() })
      })
    }
  }
}
