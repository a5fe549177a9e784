/** The continuous stream under the push transports: ordering, dedupe, resync, backpressure, release. */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { systemPrincipal } from '../../../lib/core/auth/principal.js'
import { createDeviceHub } from '../../../lib/core/devicehub.js'
import type { LogCursor } from '../../../lib/core/realtime/log-cursor.js'
import { cursorAtClock } from '../../../lib/core/realtime/log-cursor.js'
import type { MessageEvent } from '../../../lib/core/realtime/bus.js'
import { createMemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import type { MemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import { createRouter } from '../../../lib/core/realtime/router.js'
import type { Router } from '../../../lib/core/realtime/router.js'
import type { MessageStreamSpec, StreamItem } from '../../../lib/core/realtime/message-stream.js'
import { iterateStream, openMessageStream } from '../../../lib/core/realtime/message-stream.js'
import { sleep } from '../../fixtures/messaging.js'
import { openTestStore } from '../../fixtures/store.js'

interface Row { id: number, ts: number }

/** One router per doorbell, as a hub owns one. */
const routers = new WeakMap<MemoryDoorbell, Router>()
const routerOf = (doorbell: MemoryDoorbell): Router => {
  let router = routers.get(doorbell)
  if (router === undefined) routers.set(doorbell, router = createRouter(doorbell))
  return router
}

/** A stream over an in-memory table whose doorbell the test rings by hand. */
function fakeSpec (rows: Row[], doorbell = createMemoryDoorbell(), hooks: { afterMark?: () => void } = {}): MessageStreamSpec<Row, Row> & { doorbell: ReturnType<typeof createMemoryDoorbell> } {
  return {
    doorbell,
    router: routerOf(doorbell),
    routes: (e) => e.kind === 'notification',
    mark: async (): Promise<LogCursor> => {
      const mark = { notification: Math.max(0, ...rows.map((r) => r.id)), command: 0, clock: Math.max(0, ...rows.map((r) => r.ts)) }
      hooks.afterMark?.()
      return mark
    },
    readAfter: async (after, upTo, limit) => rows.filter((r) => r.ts > after.clock && r.ts <= upTo.clock).sort((a, b) => a.ts - b.ts).slice(0, limit),
    load: async (e) => rows.find((r) => r.id === e.id),
    matches: () => true,
    fresh: (r, mark) => r.id > mark.notification,
    cursorOf: (r) => r.ts,
    view: (r) => r,
    keyOf: (r) => r.id
  }
}

const ring = (id: number): MessageEvent => ({ kind: 'notification', id, deviceId: 'd', networkId: 1, deviceTypeId: 1, name: 'n' })

t.test('an item committed between the mark and the backlog read is delivered once', async (t) => {
  const rows: Row[] = [{ id: 1, ts: 10 }, { id: 2, ts: 20 }]
  const doorbell = createMemoryDoorbell()
  // Row 3 commits after the mark was read, before the backlog read: above the mark, so it comes live.
  const spec = fakeSpec(rows, doorbell, {
    afterMark: () => {
      rows.push({ id: 3, ts: 30 })
      void doorbell.publish(ring(3))
    }
  })
  const stream = await openMessageStream({ ...spec, after: cursorAtClock(0) })
  const got: number[] = []
  stream.start(({ item }) => { got.push(item.id) })
  rows.push({ id: 4, ts: 40 })
  await doorbell.publish(ring(4))
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(got, [1, 2, 3, 4])
  stream.close()
  t.equal(doorbell.size, 0)
})

t.test('live only: items before the mark are not delivered; the cap limits the backlog', async (t) => {
  const rows: Row[] = Array.from({ length: 250 }, (_, i) => ({ id: i + 1, ts: (i + 1) * 10 }))
  const spec = fakeSpec(rows)
  const live = await openMessageStream(spec)
  const capped = await openMessageStream({ ...spec, after: cursorAtClock(0), backlogLimit: 120 })
  const all = await openMessageStream({ ...spec, after: cursorAtClock(0) })
  const got = { live: [] as number[], capped: [] as number[], all: [] as number[] }
  live.start(({ item }) => { got.live.push(item.id) })
  capped.start(({ item }) => { got.capped.push(item.id) })
  all.start(({ item }) => { got.all.push(item.id) })
  await spec.doorbell.publish(ring(5)) // an old row rung again: not fresh
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(got.live, [])
  t.same(got.capped, Array.from({ length: 120 }, (_, i) => i + 1))
  t.same(got.all, Array.from({ length: 250 }, (_, i) => i + 1), 'pages of 100 until the end')
  for (const s of [live, capped, all]) s.close()
})

t.test('resync: rows whose doorbells were lost are read again after the newest cursor delivered', async (t) => {
  const rows: Row[] = [{ id: 1, ts: 10 }]
  const spec = fakeSpec(rows)
  const stream = await openMessageStream(spec)
  const got: number[] = []
  stream.start(({ item }) => { got.push(item.id) })
  rows.push({ id: 2, ts: 20 })
  await spec.doorbell.publish(ring(2))
  rows.push({ id: 3, ts: 30 }, { id: 4, ts: 40 }) // rung on a connection that was lost
  await spec.doorbell.publish({ kind: 'resync' })
  await spec.doorbell.publish(ring(4)) // a late doorbell for a row the resync delivered
  rows.push({ id: 5, ts: 50 })
  await spec.doorbell.publish(ring(5))
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(got, [2, 3, 4, 5])
  stream.close()
})

t.test('resync: every lost row up to the mark is delivered, page after page', async (t) => {
  const rows: Row[] = [{ id: 1, ts: 10 }]
  const spec = fakeSpec(rows)
  const stream = await openMessageStream(spec)
  const got: number[] = []
  stream.start(({ item }) => { got.push(item.id) })
  // 250 rows rung on a connection that was lost: more than two pages of a resync read.
  for (let id = 2; id <= 251; id++) rows.push({ id, ts: id * 10 })
  await spec.doorbell.publish({ kind: 'resync' })
  rows.push({ id: 252, ts: 2520 })
  await spec.doorbell.publish(ring(252))
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(got, Array.from({ length: 251 }, (_, i) => i + 2))
  stream.close()
})

t.test('resync: late doorbells of what it read are skipped by its mark; no key is kept per row', async (t) => {
  const rows: Row[] = []
  const spec = fakeSpec(rows)
  const stream = await openMessageStream({ ...spec, after: cursorAtClock(0) })
  const got: number[] = []
  stream.start(({ item }) => { got.push(item.id) })
  // Three rounds of 300 rows whose doorbells were dropped, each found by a resync; a few come late.
  for (let round = 0; round < 3; round++) {
    for (let k = 1; k <= 300; k++) rows.push({ id: round * 300 + k, ts: (round * 300 + k) * 10 })
    await spec.doorbell.publish({ kind: 'resync' })
    await sleep(30)
    for (const late of [1, 150, 300]) await spec.doorbell.publish(ring(round * 300 + late))
  }
  rows.push({ id: 901, ts: 9010 })
  await spec.doorbell.publish(ring(901))
  await sleep(30)
  t.same(got, Array.from({ length: 901 }, (_, i) => i + 1), 'each row once, in order')
  const seen = (stream as unknown as { seen?: Set<unknown> }).seen
  t.equal(seen?.size ?? 0, 0, 'the stream holds no key for rows whose doorbells never came')
  stream.close()
})

t.test('resync: a page size (a long poll\'s limit) bounds each read', async (t) => {
  const rows: Row[] = []
  const spec = { ...fakeSpec(rows), pageSize: 7 }
  const stream = await openMessageStream(spec)
  const batches: number[][] = [[]]
  stream.start(({ item }) => { batches[batches.length - 1]!.push(item.id) }, undefined, () => { batches.push([]) })
  for (let id = 1; id <= 20; id++) rows.push({ id, ts: id * 10 })
  await spec.doorbell.publish({ kind: 'resync' })
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(batches.filter((b) => b.length > 0), [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14], [15, 16, 17, 18, 19, 20]])
  stream.close()
})

t.test('resync during the open: read after the mark the open took, not from the start of the log', async (t) => {
  // More rows than a page before the stream opens, so a read from the start would not reach the new ones.
  const rows: Row[] = Array.from({ length: 150 }, (_, i) => ({ id: i + 1, ts: (i + 1) * 10 }))
  const doorbell = createMemoryDoorbell()
  let opened = false
  const spec = fakeSpec(rows, doorbell, {
    afterMark: () => {
      if (opened) return
      opened = true
      // Written and lost while the open's mark is on its way back: only the resync tells.
      rows.push({ id: 151, ts: 1510 }, { id: 152, ts: 1520 })
      void doorbell.publish({ kind: 'resync' })
    }
  })
  const mark = spec.mark
  const stream = await openMessageStream({
    ...spec,
    mark: async () => {
      const taken = await mark()
      await sleep(10)
      return taken
    }
  })
  const got: number[] = []
  stream.start(({ item }) => { got.push(item.id) })
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(got, [151, 152])
  stream.close()
})

t.test('a sink that returns a promise holds delivery (backpressure) without losing order', async (t) => {
  const rows: Row[] = Array.from({ length: 30 }, (_, i) => ({ id: i + 1, ts: i + 1 }))
  const spec = fakeSpec(rows)
  const stream = await openMessageStream({ ...spec, after: cursorAtClock(0) })
  const got: number[] = []
  let open = 0
  let most = 0
  stream.start(async ({ item }) => {
    open++
    most = Math.max(most, open)
    got.push(item.id)
    await new Promise((resolve) => setTimeout(resolve, 1))
    open--
  })
  rows.push({ id: 31, ts: 31 })
  await spec.doorbell.publish(ring(31))
  while (got.length < 31) await new Promise((resolve) => setTimeout(resolve, 5))
  t.equal(most, 1, 'one item at a time')
  t.same(got, Array.from({ length: 31 }, (_, i) => i + 1))
  stream.close()
})

t.test('a failing read closes the stream and reports once; shutdown closes open streams', async (t) => {
  const rows: Row[] = []
  const spec = fakeSpec(rows)
  const stream = await openMessageStream({ ...spec, load: async () => { throw new Error('store down') } })
  const errors: unknown[] = []
  let closed = 0
  stream.onClose(() => { closed++ })
  stream.start(() => undefined, (error) => errors.push(error))
  await spec.doorbell.publish(ring(1))
  await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(errors.length, 1)
  t.equal(closed, 1)
  t.ok(stream.closed)
  t.equal(spec.doorbell.size, 0)
  await t.rejects(openMessageStream({ ...spec, readAfter: async () => { throw new Error('no') }, after: cursorAtClock(-1) }))
  t.equal(spec.doorbell.size, 0, 'a stream that failed to open leaves no listener')
})

t.test('hub subscribe: iterate, scope at event time, release at shutdown', async (t) => {
  const store = await openTestStore(t)
  const hub = await createDeviceHub({ store, admin: { password: 'stream-password-1' } })
  t.teardown(() => hub.close())
  await store.devices.insert({ id: 's1', name: 's1', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  const stream = await hub.notifications.subscribe(systemPrincipal, { networkIds: [1], names: ['a', 'b'] })
  const items: Array<StreamItem<{ notification: string }>> = []
  const reading = (async () => {
    for await (const item of iterateStream(stream)) items.push(item)
  })()
  for (const name of ['a', 'x', 'b']) await hub.notifications.insert(systemPrincipal, { deviceId: 's1', body: { notification: name } })
  await store.devices.insert({ id: 's2', name: 's2', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  await hub.notifications.insert(systemPrincipal, { deviceId: 's2', body: { notification: 'a' } })
  while (items.length < 3) await new Promise((resolve) => setTimeout(resolve, 5))
  t.same(items.map((i) => i.item.notification), ['a', 'b', 'a'])
  t.ok(items[0]!.cursor < items[1]!.cursor && items[1]!.cursor < items[2]!.cursor, 'cursors increase')
  hub.releaseWaiters()
  await reading
  t.ok(stream.closed, 'shutdown closes streams')
  await t.rejects(hub.notifications.subscribe(systemPrincipal, {}), { code: 'UNAVAILABLE' })
})

// Issue #26: a long poll's stream is often in V8's old generation by the time it answers, and a
// dead old object keeps what it points at through every scavenge until the next full collection.
// A closed stream must not point at its consumer: through the sink, the poll's whole answer.
t.test('a closed stream lets go of its consumer\'s callbacks', async (t) => {
  setFlagsFromString('--expose-gc')
  const collect = runInNewContext('gc') as () => void
  const stream = await openMessageStream(fakeSpec([]))
  const watched = ((): WeakRef<object> => {
    const answer = { items: new Array(1000).fill('answer') }
    const sink = (): void => { answer.items.push('more') }
    stream.start(sink, () => answer, () => answer)
    return new WeakRef(answer)
  })()
  stream.close()
  // A WeakRef keeps its target until the job that made it has ended.
  await sleep(1)
  collect()
  t.equal(watched.deref(), undefined, 'the sink and its answer are collected while the stream is still held')
  t.equal(stream.closed, true)
})
