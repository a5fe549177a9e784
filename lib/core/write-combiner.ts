/**
 * Group commit for one kind of write: calls that arrive while a batch is being written (or in
 * the same event-loop turn) go out together as the next batch, one statement for all, so N
 * writes share one round trip and one commit flush (see docs/architecture.md, "Message writes
 * on PostgreSQL"). With `concurrency` above 1 several batches are in flight at once, for writes
 * whose order between calls does not matter: their commits overlap, and the database flushes
 * them together. A batch that fails is written again item by item, so one bad item fails only
 * its own call.
 */
import { countDown, countUp } from './key-counts.js'

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
   * writes whose calls are independent (inserts), or ordered by `keyOf`.
   */
  concurrency?: number
  /**
   * What a write updates (e.g. a row's id): writes of one key keep their call order, never in one
   * batch nor in two batches in flight at once; a batch ends at the first that would be.
   */
  keyOf?(item: I): unknown
  /**
   * With `concurrency` above 1: a batch in flight of at least this many calls keeps the other
   * lanes shut (default: never). Under load, calls then queue behind that batch and go out
   * together next, fewer and larger statements; at light load a call still need not wait for
   * another batch's commit.
   */
  crowdedAt?: number
}

interface Pending<I, O> {
  item: I
  resolve(value: O): void
  reject(error: unknown): void
}

/** Calls written together, and the keys (`keyOf`) they hold while in flight. */
interface Batch<I, O> {
  calls: Array<Pending<I, O>>
  keys: ReadonlySet<unknown>
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
  const crowdedAt = options.crowdedAt ?? Number.POSITIVE_INFINITY
  /** Batches in flight of at least `crowdedAt` calls. */
  let crowded = 0
  let scheduled = false
  /** How many writes of each key (`keyOf`) the batches in flight hold. */
  const writing = new Map<unknown, number>()

  // The longest prefix of the queue that may go together: calls are written in call order, so a
  // second update of one row can never overtake the first. Empty when the first waits for a key.
  const takeBatch = (): Batch<I, O> => {
    const items: I[] = []
    const keys = new Set<unknown>()
    let n = 0
    while (n < queue.length && n < options.maxBatch) {
      const item = queue[n]!.item
      if (n > 0 && options.canJoin !== undefined && !options.canJoin(items, item)) break
      if (options.keyOf !== undefined) {
        const key = options.keyOf(item)
        if (writing.has(key) || keys.has(key)) break
        keys.add(key)
      }
      items.push(item)
      n++
    }
    for (const key of keys) countUp(writing, key)
    return { calls: queue.splice(0, n), keys }
  }

  /** The next batch, or none; a throwing `canJoin` or `keyOf` fails what is queued rather than leave it hanging. */
  const next = (): Batch<I, O> | undefined => {
    try {
      const batch = takeBatch()
      return batch.calls.length > 0 ? batch : undefined
    } catch (error) {
      for (const p of queue.splice(0)) p.reject(error)
      return undefined
    }
  }

  const finished = (batch: Batch<I, O>): void => {
    for (const key of batch.keys) countDown(writing, key)
  }

  // A `run` that throws instead of rejecting must not stop the combiner: every call goes through a promise.
  const runSafely = (items: I[]): Promise<O[]> => Promise.resolve().then(() => run(items))

  async function writeBatch ({ calls }: Batch<I, O>): Promise<void> {
    try {
      const results = await runSafely(calls.map((p) => p.item))
      calls.forEach((p, i) => p.resolve(results[i]!))
    } catch (error) {
      if (calls.length === 1) {
        calls[0]!.reject(error)
        return
      }
      for (const p of calls) await runSafely([p.item]).then((results) => p.resolve(results[0]!), p.reject)
    }
  }

  /**
   * One lane: writes batches until the queue is empty, or until its first call waits for a key
   * another lane is writing (that lane takes it once its batch is done).
   */
  async function lane (first: Batch<I, O>): Promise<void> {
    for (let batch: Batch<I, O> | undefined = first; batch !== undefined; batch = shut(active - 1) ? undefined : next()) {
      const big = batch.calls.length >= crowdedAt
      if (big) crowded++
      await writeBatch(batch)
      if (big) crowded--
      finished(batch)
    }
    active--
  }

  /** Whether a lane must not take a batch beside `others` lanes: one of them writes a crowded batch. */
  const shut = (others: number): boolean => others > 0 && crowded > 0

  /** Starts lanes for what is queued, up to `concurrency`. */
  function start (): void {
    scheduled = false
    while (active < concurrency && !shut(active)) {
      const batch = next()
      if (batch === undefined) return
      active++
      void lane(batch)
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
