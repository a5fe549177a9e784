/**
 * Group commit: batching per event-loop turn, maxBatch, batches in flight (one, or `concurrency`,
 * or one while crowded: `crowdedAt`), canJoin, keyOf, item-by-item retry.
 */
import t from 'tap'
import { createWriteCombiner } from '../../lib/core/write-combiner.js'
import type { WriteCombinerOptions } from '../../lib/core/write-combiner.js'

const turn = async (): Promise<void> => await new Promise((resolve) => setImmediate(resolve))

/** A combiner whose `run` records every batch and answers each item with `result(item)`. */
function recorder<I, O> (result: (item: I) => O, options: WriteCombinerOptions<I>) {
  const batches: I[][] = []
  const combiner = createWriteCombiner(async (items: I[]) => {
    batches.push([...items])
    return items.map(result)
  }, options)
  return { batches, combiner }
}

t.test('calls made in the same turn go out as one batch; each caller gets its own result', async (t) => {
  const { batches, combiner } = recorder((n: number) => `r${n}`, { maxBatch: 10 })
  const results = await Promise.all([1, 2, 3, 4].map(async (n) => await combiner.write(n)))
  t.same(batches, [[1, 2, 3, 4]], 'one call to run with every item, in call order')
  t.same(results, ['r1', 'r2', 'r3', 'r4'], 'results are matched by position')
})

t.test('maxBatch bounds a batch: 450 calls with maxBatch 200 go out as 200, 200, 50 in call order', async (t) => {
  const { batches, combiner } = recorder((n: number) => n * 2, { maxBatch: 200 })
  const items = Array.from({ length: 450 }, (_, i) => i)
  const results = await Promise.all(items.map(async (n) => await combiner.write(n)))
  t.same(batches.map((b) => b.length), [200, 200, 50])
  t.same(batches.flat(), items, 'every item once, in call order')
  t.same(results, items.map((n) => n * 2))
})

t.test('calls arriving while a batch is written join the next batch; one batch in flight at a time', async (t) => {
  const batches: string[][] = []
  const releases: Array<() => void> = []
  let inFlight = 0
  let maxInFlight = 0
  const combiner = createWriteCombiner(async (items: string[]) => {
    batches.push([...items])
    maxInFlight = Math.max(maxInFlight, ++inFlight)
    await new Promise<void>((resolve) => releases.push(resolve))
    inFlight--
    return items.map((s) => s.toUpperCase())
  }, { maxBatch: 10 })

  const first = combiner.write('a')
  await turn()
  t.same(batches, [['a']], 'the first batch is being written')
  const later = ['b', 'c', 'd'].map(async (s) => await combiner.write(s))
  await turn()
  await turn()
  t.same(batches, [['a']], 'no second batch while the first is in flight')
  releases.shift()!()
  t.equal(await first, 'A')
  await turn()
  t.same(batches, [['a'], ['b', 'c', 'd']], 'the calls made meanwhile go out together as the next batch')
  releases.shift()!()
  t.same(await Promise.all(later), ['B', 'C', 'D'])
  t.equal(maxInFlight, 1, 'never two batches at once')
})

t.test('canJoin: a batch ends at the first item that may not join; none is lost, call order is kept', async (t) => {
  interface Item { channel: string, key: string }
  const { batches, combiner } = recorder((i: Item) => `${i.channel}:${i.key}`, {
    maxBatch: 10,
    canJoin: (batch, item) => batch[0]!.channel === item.channel && !batch.some((b) => b.key === item.key)
  })
  const items: Item[] = [
    { channel: 'A', key: 'x' }, { channel: 'B', key: 'y' }, { channel: 'A', key: 'z' },
    { channel: 'A', key: 'x' }, { channel: 'B', key: 'w' }, { channel: 'A', key: 'v' }
  ]
  const results = await Promise.all(items.map(async (i) => await combiner.write(i)))
  t.same(batches.map((b) => b.map((i) => `${i.channel}:${i.key}`)), [
    ['A:x'],
    ['B:y'],
    ['A:z', 'A:x'],
    ['B:w'],
    ['A:v']
  ], 'one channel per batch, a key once per batch, and no item overtakes an earlier call')
  t.same(results, items.map((i) => `${i.channel}:${i.key}`), 'every caller gets its own result')
  t.equal(batches.flat().length, items.length, 'nothing lost or written twice')
})

t.test('a failing batch is retried item by item: only the bad item fails, and the combiner goes on', async (t) => {
  const batches: string[][] = []
  const combiner = createWriteCombiner(async (items: string[]) => {
    batches.push([...items])
    if (items.includes('bad')) throw new Error('bad item')
    return items.map((s) => `ok:${s}`)
  }, { maxBatch: 10 })
  const [a, bad, c] = ['a', 'bad', 'c'].map(async (s) => await combiner.write(s))
  t.equal(await a, 'ok:a')
  await t.rejects(bad!, { message: 'bad item' }, 'the bad item\'s caller gets the error')
  t.equal(await c, 'ok:c')
  t.same(batches, [['a', 'bad', 'c'], ['a'], ['bad'], ['c']], 'the batch, then each item on its own')
  t.equal(await combiner.write('d'), 'ok:d', 'later writes still work')
  t.same(batches.at(-1), ['d'])
})

t.test('after the queue drains the combiner goes idle and a new write starts a new batch', async (t) => {
  const { batches, combiner } = recorder((n: number) => n + 100, { maxBatch: 10 })
  t.same(await Promise.all([combiner.write(1), combiner.write(2)]), [101, 102])
  await turn()
  t.same(batches, [[1, 2]])
  t.equal(await combiner.write(3), 103, 'a write after idling is written')
  t.same(batches, [[1, 2], [3]], 'in a batch of its own')
  t.same(await Promise.all([combiner.write(4), combiner.write(5)]), [104, 105])
  t.same(batches, [[1, 2], [3], [4, 5]])
})

t.test('a run that throws instead of rejecting, or a throwing canJoin, never leaves calls hanging', async (t) => {
  const combiner = createWriteCombiner((items: string[]) => {
    if (items.includes('bad')) throw new Error('thrown')
    return Promise.resolve(items.map((s) => `ok:${s}`))
  }, { maxBatch: 10 })
  const [a, bad, c] = ['a', 'bad', 'c'].map(async (s) => await combiner.write(s))
  t.equal(await a, 'ok:a')
  await t.rejects(bad!, { message: 'thrown' })
  t.equal(await c, 'ok:c')
  t.equal(await combiner.write('late'), 'ok:late', 'the combiner goes on')

  const picky = createWriteCombiner(async (items: number[]) => items, {
    maxBatch: 10,
    canJoin: (_batch, item) => { if (item === 2) throw new Error('canJoin bug'); return true }
  })
  const calls = [1, 2, 3].map(async (n) => await picky.write(n))
  await t.rejects(Promise.all(calls), { message: 'canJoin bug' }, 'queued calls fail instead of hanging')
  await Promise.allSettled(calls)
  t.equal(await picky.write(1), 1, 'and later writes work')
})

/**
 * A combiner whose batches stay in flight until released (`releases`, in start order); each item
 * answers itself times ten, and `most()` is the largest number of batches in flight at once.
 */
function gated (options: WriteCombinerOptions<number>) {
  const releases: Array<() => void> = []
  const batches: number[][] = []
  let inFlight = 0
  let most = 0
  const combiner = createWriteCombiner(async (items: number[]) => {
    batches.push([...items])
    inFlight++
    most = Math.max(most, inFlight)
    await new Promise<void>((resolve) => releases.push(resolve))
    inFlight--
    return items.map((n) => n * 10)
  }, options)
  return { releases, batches, combiner, most: () => most }
}

t.test('concurrency: up to N batches in flight; calls beyond wait and go out together', async (t) => {
  const { releases, batches, combiner, most } = gated({ maxBatch: 10, concurrency: 2 })
  const first = combiner.write(1)
  await turn()
  const second = combiner.write(2)
  await turn()
  t.same(batches, [[1], [2]], 'a second batch starts while the first is in flight')
  const rest = [3, 4, 5].map(async (n) => await combiner.write(n))
  await turn()
  t.same(batches, [[1], [2]], 'not a third')
  releases.shift()!()
  t.equal(await first, 10)
  await turn()
  t.same(batches, [[1], [2], [3, 4, 5]], 'the waiting calls go out as one batch when a lane frees')
  releases.shift()!()
  releases.shift()!()
  t.same(await Promise.all([second, ...rest]), [20, 30, 40, 50])
  t.equal(most(), 2, 'never more than two at once')
})

t.test('crowdedAt: a crowded batch in flight keeps the other lanes shut; small batches spread again', async (t) => {
  const { releases, batches, combiner, most } = gated({ maxBatch: 10, concurrency: 2, crowdedAt: 3 })
  const crowd = [1, 2, 3].map(async (n) => await combiner.write(n))
  await turn()
  const queued = [4, 5, 6, 7].map(async (n) => await combiner.write(n))
  await turn()
  t.same(batches, [[1, 2, 3]], 'no second lane beside a batch of crowdedAt calls')
  releases.shift()!()
  t.same(await Promise.all(crowd), [10, 20, 30])
  await turn()
  t.same(batches, [[1, 2, 3], [4, 5, 6, 7]], 'the calls that waited go out as one batch')
  const small = combiner.write(8)
  await turn()
  t.same(batches.length, 2, 'still shut: the batch in flight is crowded')
  releases.shift()!()
  t.same(await Promise.all(queued), [40, 50, 60, 70])
  await turn()
  t.same(batches[2], [8], 'the next call goes out alone')
  const beside = combiner.write(9)
  await turn()
  t.same(batches[3], [9], 'beside a small batch a second lane opens')
  t.equal(most(), 2, 'never more than two at once')
  releases.shift()!()
  releases.shift()!()
  t.same(await Promise.all([small, beside]), [80, 90])
})

t.test('keyOf: writes of one key keep call order, never in one batch nor in two lanes at once', async (t) => {
  interface Item { id: string, n: number }
  const releases: Array<() => void> = []
  const batches: string[][] = []
  const inFlight = new Set<string>()
  const overlaps: string[] = []
  const combiner = createWriteCombiner(async (items: Item[]) => {
    batches.push(items.map((i) => `${i.id}${i.n}`))
    for (const i of items) {
      if (inFlight.has(i.id)) overlaps.push(i.id)
      inFlight.add(i.id)
    }
    await new Promise<void>((resolve) => releases.push(resolve))
    for (const i of items) inFlight.delete(i.id)
    return items.map((i) => `${i.id}${i.n}`)
  }, { maxBatch: 10, concurrency: 2, keyOf: (item) => item.id })
  const write = async (id: string, n: number): Promise<string> => await combiner.write({ id, n })

  const first = [write('a', 1), write('b', 1), write('a', 2)]
  await turn()
  t.same(batches, [['a1', 'b1']], 'a second write of a key ends the batch, and waits while the first is in flight')
  const later = [write('c', 1), write('d', 1)]
  await turn()
  await turn()
  t.same(batches, [['a1', 'b1']], 'the free lane does not take a2, nor let c1 and d1 overtake it')
  releases.shift()!()
  await turn()
  t.same(batches, [['a1', 'b1'], ['a2', 'c1', 'd1']], 'once a1 is written, a2 goes with the calls behind it')
  const other = write('e', 1)
  await turn()
  t.same(batches.at(-1), ['e1'], 'a call of a free key uses the second lane')
  releases.shift()!()
  releases.shift()!()
  t.same(await Promise.all([...first, ...later, other]), ['a1', 'b1', 'a2', 'c1', 'd1', 'e1'])
  t.same(overlaps, [], 'never one key in two batches in flight')

  const same = [write('x', 1), write('x', 2), write('x', 3)]
  for (let i = 0; i < 3; i++) {
    await turn()
    releases.shift()?.()
  }
  t.same(await Promise.all(same), ['x1', 'x2', 'x3'])
  t.same(batches.slice(-3), [['x1'], ['x2'], ['x3']], 'one at a time, in call order')
})

t.test('a throwing keyOf fails what is queued, never the process, and later writes work', async (t) => {
  const combiner = createWriteCombiner(async (items: number[]) => items, {
    maxBatch: 10, concurrency: 2, keyOf: (item) => { if (item === 2) throw new Error('keyOf bug'); return item }
  })
  const calls = [1, 2, 3].map(async (n) => await combiner.write(n))
  await t.rejects(Promise.all(calls), { message: 'keyOf bug' })
  await Promise.allSettled(calls)
  t.equal(await combiner.write(4), 4)
})
