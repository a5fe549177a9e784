/** The long poll as the first batch of a message stream: backlog, first live item, resync, release. */
import t from 'tap'
import type { LogCursor } from '../../../lib/core/realtime/log-cursor.js'
import { cursorAtClock } from '../../../lib/core/realtime/log-cursor.js'
import type { BusEvent, MessageEvent } from '../../../lib/core/realtime/bus.js'
import { createWaiterRegistry } from '../../../lib/core/realtime/cancellation.js'
import type { WaiterRegistry } from '../../../lib/core/realtime/cancellation.js'
import type { LongPollOptions } from '../../../lib/core/realtime/long-poll.js'
import { longPoll } from '../../../lib/core/realtime/long-poll.js'
import type { MemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import { createMemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import type { MessageStreamSpec } from '../../../lib/core/realtime/message-stream.js'
import { openMessageStream } from '../../../lib/core/realtime/message-stream.js'
import { createEventLoader, createSharedReader } from '../../../lib/core/realtime/shared-read.js'
import { createRouter } from '../../../lib/core/realtime/router.js'
import type { Router } from '../../../lib/core/realtime/router.js'

const RESYNC: BusEvent = { kind: 'resync' }

interface Row { id: number, ts: number }

/** One router per doorbell, as a hub owns one. */
const routers = new WeakMap<MemoryDoorbell, Router>()
const routerOf = (doorbell: MemoryDoorbell): Router => {
  let router = routers.get(doorbell)
  if (router === undefined) routers.set(doorbell, router = createRouter(doorbell))
  return router
}

const event = (id: number): MessageEvent => ({ kind: 'notification', id, deviceId: 'd', networkId: 1, deviceTypeId: 1, name: 'n' })

/** A stream spec over an in-memory table (ids double as stamps); `over` replaces any rule. */
function spec (rows: Row[], doorbell: MemoryDoorbell, over: Partial<MessageStreamSpec<Row, number>> = {}): MessageStreamSpec<Row, number> {
  return {
    router: routerOf(doorbell),
    routes: () => true,
    mark: async (): Promise<LogCursor> => ({ notification: Math.max(0, ...rows.map((r) => r.id)), command: 0, clock: Math.max(0, ...rows.map((r) => r.ts)) }),
    readAfter: async (after, upTo, limit) => rows.filter((r) => r.ts > after.clock && r.ts <= upTo.clock).slice(0, limit),
    load: async (e) => rows.find((r) => r.id === e.id),
    matches: () => true,
    fresh: (r, mark) => r.id > mark.notification,
    cursorOf: (r) => r.ts,
    view: (r) => r.id,
    keyOf: (r) => r.id,
    ...over
  }
}

async function poll (s: MessageStreamSpec<Row, number>, options: LongPollOptions): Promise<number[]> {
  return longPoll(await openMessageStream(s), options)
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10))

t.test('the backlog after the cursor is answered at once, as one batch', async (t) => {
  const doorbell = createMemoryDoorbell()
  const rows = [1, 2, 3, 4].map((id) => ({ id, ts: id }))
  t.same(await poll(spec(rows, doorbell, { after: cursorAtClock(1), backlogLimit: 2, pageSize: 2 }), { waitSeconds: 30 }), [2, 3], 'up to the limit')
  t.same(await poll(spec(rows, doorbell, { after: cursorAtClock(4), backlogLimit: 100 }), { waitSeconds: 0 }), [], 'nothing after the cursor, no wait: []')
  t.equal(routerOf(doorbell).size, 0, 'every stream closed')
})

t.test('waiters woken by the same doorbell share one read', async (t) => {
  const doorbell = createMemoryDoorbell()
  const reader = createSharedReader<Row | undefined>()
  let reads = 0
  const polls = Array.from({ length: 1000 }, () => poll(spec([], doorbell, {
    load: (e) => reader.read(e, async () => { reads++; return { id: e.id, ts: e.id } })
  }), { waitSeconds: 5 }))
  while (routerOf(doorbell).size < 1000) await new Promise((resolve) => setImmediate(resolve))
  await settle()
  await doorbell.publish(event(42))
  const results = await Promise.all(polls)
  t.equal(reads, 1, 'one store read for 1000 waiters')
  t.ok(results.every((r) => r.length === 1 && r[0] === 42))
  t.equal(doorbell.size, 0)
})

t.test('the event loader uses the record an event carries, else one read shared by the event\'s waiters', async (t) => {
  const reads: number[] = []
  const load = createEventLoader<Row>(async (id) => { reads.push(id); return { id, ts: id } })
  const carried = { ...event(7), record: { id: 7, notification: 'n', deviceId: 'd', networkId: 1, deviceTypeId: 1, timestamp: 7, parameters: null, stamp: 7 } }
  t.equal(await load(carried), carried.record, 'the carried record, as is')
  const bare = event(8)
  t.same(await Promise.all([load(bare), load(bare)]), [{ id: 8, ts: 8 }, { id: 8, ts: 8 }])
  t.same(reads, [8], 'no read for the carried record, one read for two waiters of the bare event')
})

t.test('a doorbell that rings during the backlog read is not lost; the first accepted item wins', async (t) => {
  const doorbell = createMemoryDoorbell()
  const rows: Row[] = []
  const answer = poll(spec(rows, doorbell, {
    // Below the mark (0): a cursor at or past the mark skips the read, and with it this race.
    after: cursorAtClock(-1),
    routes: (e) => e.id !== 2,
    matches: (r) => r.id !== 1,
    readAfter: async () => {
      for (const id of [1, 2, 3]) {
        rows.push({ id, ts: id })
        await doorbell.publish(event(id))
      }
      return []
    }
  }), { waitSeconds: 5 })
  t.same(await answer, [3])
})

t.test('abort and timeout answer [], and clean up', async (t) => {
  const doorbell = createMemoryDoorbell()
  const controller = new AbortController()
  const aborted = poll(spec([], doorbell), { waitSeconds: 30, signal: controller.signal })
  await settle()
  controller.abort()
  t.same(await aborted, [])
  t.same(await poll(spec([], doorbell), { waitSeconds: 30, signal: controller.signal }), [], 'an already aborted signal answers at once')
  t.same(await poll(spec([], doorbell), { waitSeconds: 0.05 }), [], 'timeout')
  t.equal(doorbell.size, 0)
})

t.test('a revoke for the caller answers [] (the next poll authenticates again)', async (t) => {
  const doorbell = createMemoryDoorbell()
  const answer = poll(spec([], doorbell, { revokedBy: (e) => e.userId === 7 }), { waitSeconds: 30 })
  await settle()
  await doorbell.publish({ kind: 'revoke', userId: 8, what: 'rights' })
  await doorbell.publish({ kind: 'revoke', userId: 7, what: 'rights' })
  t.same(await answer, [])
  t.equal(doorbell.size, 0)
})

t.test('a resync answers with what was written without a doorbell; equal keys share one read, all one mark', async (t) => {
  const doorbell = createMemoryDoorbell()
  const rows: Row[] = [{ id: 1, ts: 1 }]
  let reads = 0
  let marks = 0
  const keyed = (key: string): MessageStreamSpec<Row, number> => {
    const base = spec(rows, doorbell)
    return {
      ...base,
      keys: { kinds: ['notification'], deviceIds: [key] },
      resyncKey: () => key,
      mark: async () => {
        marks++
        return base.mark()
      },
      readAfter: async (after, upTo, limit) => {
        reads++
        return base.readAfter(after, upTo, limit)
      }
    }
  }
  const polls = [...Array.from({ length: 50 }, () => poll(keyed('a'), { waitSeconds: 5 })), ...Array.from({ length: 50 }, () => poll(keyed('b'), { waitSeconds: 5 }))]
  while (routerOf(doorbell).size < 100) await new Promise((resolve) => setImmediate(resolve))
  await settle()
  marks = 0
  // Written after every stream took its mark, its event lost: only a read up to a later mark finds it.
  rows.push({ id: 2, ts: 2 })
  await doorbell.publish(RESYNC)
  const results = await Promise.all(polls)
  t.ok(results.every((r) => r.length === 1 && r[0] === 2), 'every waiter got the item')
  t.equal(reads, 2, 'one re-read per distinct key and cursor, not one per waiter')
  t.equal(marks, 1, 'one mark for the resync, taken after it, shared by every stream it reached')
})

t.test('the waiter registry releases every pending poll at shutdown, then refuses new streams', async (t) => {
  const doorbell = createMemoryDoorbell()
  const waiters: WaiterRegistry = createWaiterRegistry()
  const polls = [poll(spec([], doorbell, { waiters }), { waitSeconds: 30 }), poll(spec([], doorbell, { waiters }), { waitSeconds: 30 })]
  while (waiters.size < 2) await new Promise((resolve) => setImmediate(resolve))
  waiters.releaseAll()
  t.same(await Promise.all(polls), [[], []])
  await t.rejects(openMessageStream(spec([], doorbell, { waiters })), { code: 'UNAVAILABLE' }, 'after shutdown: refused')
  t.equal(waiters.size, 0)
  t.equal(doorbell.size, 0)
})

t.test('a cursor at or past the mark costs no read: what follows arrives live', async (t) => {
  const doorbell = createMemoryDoorbell()
  const rows = [1, 2].map((id) => ({ id, ts: id }))
  let reads = 0
  const answer = poll(spec(rows, doorbell, { after: cursorAtClock(2), readAfter: async () => { reads++; return [] } }), { waitSeconds: 5 })
  await settle()
  rows.push({ id: 3, ts: 3 })
  await doorbell.publish(event(3))
  t.same(await answer, [3])
  t.equal(reads, 0, 'no backlog read')
})

t.test('a stream whose log knows what is newer for it skips the backlog read', async (t) => {
  const doorbell = createMemoryDoorbell()
  const rows = [1, 2, 3].map((id) => ({ id, ts: id }))
  let reads = 0
  const counted = async (): Promise<Row[]> => { reads++; return [] }
  const quiet = poll(spec(rows, doorbell, { after: cursorAtClock(1), known: () => [], readAfter: counted }), { waitSeconds: 0 })
  t.same(await quiet, [])
  const sole = poll(spec(rows, doorbell, { after: cursorAtClock(2), known: () => [rows[2]!], readAfter: counted }), { waitSeconds: 0 })
  t.same(await sole, [3], 'the one record the log knows is the answer')
  t.equal(reads, 0, 'no read')
  const busy = poll(spec(rows, doorbell, { after: cursorAtClock(1), known: () => undefined }), { waitSeconds: 0 })
  t.same(await busy, [2, 3], 'otherwise the backlog is read')
})
