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
  /** Whether `item` may join `batch` (e.g. same NOTIFY channel, not the same row twice). */
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
  let queue: Array<Pending<I, O>> = []
  let active = false

  const takeBatch = (): Array<Pending<I, O>> => {
    const batch: Array<Pending<I, O>> = []
    const items: I[] = []
    const rest: Array<Pending<I, O>> = []
    for (const p of queue) {
      if (batch.length < options.maxBatch && (batch.length === 0 || options.canJoin === undefined || options.canJoin(items, p.item))) {
        batch.push(p)
        items.push(p.item)
      } else rest.push(p)
    }
    queue = rest
    return batch
  }

  async function flush (): Promise<void> {
    while (queue.length > 0) {
      const batch = takeBatch()
      try {
        const results = await run(batch.map((p) => p.item))
        batch.forEach((p, i) => p.resolve(results[i]!))
      } catch {
        for (const p of batch) await run([p.item]).then((results) => p.resolve(results[0]!), p.reject)
      }
    }
    active = false
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
