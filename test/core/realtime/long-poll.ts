import t from 'tap'
import type { DoorbellEvent } from '../../../lib/core/realtime/doorbell.js'
import { createWaiterRegistry } from '../../../lib/core/realtime/cancellation.js'
import { dispatcherFor } from '../../../lib/core/realtime/dispatcher.js'
import { longPoll } from '../../../lib/core/realtime/long-poll.js'
import { createMemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import { createSharedReader } from '../../../lib/core/realtime/shared-read.js'

const event = (id: number): DoorbellEvent => ({ kind: 'notification', id, deviceId: 'd', networkId: 1, deviceTypeId: 1, name: 'n' })

t.test('waiters woken by the same doorbell share one read', async (t) => {
  const doorbell = createMemoryDoorbell()
  const reader = createSharedReader<number | undefined>()
  let reads = 0
  const polls = Array.from({ length: 1000 }, () => longPoll<number>({
    doorbell,
    waitSeconds: 5,
    routes: () => true,
    highWater: async () => ({ id: 0, clock: 0 }),
    backlog: async () => [],
    load: (e) => reader.read(e, async () => { reads++; return e.id }),
    accepts: () => true
  }))
  while (dispatcherFor(doorbell).size < 1000) await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setTimeout(resolve, 10))
  await doorbell.publish(event(42))
  const results = await Promise.all(polls)
  t.equal(reads, 1, 'one store read for 1000 waiters')
  t.ok(results.every((r) => r.length === 1 && r[0] === 42))
  t.equal(doorbell.size, 0)
  const again = reader.read(event(42), async () => { reads++; return 42 })
  await again
  t.equal(reads, 2, 'a later doorbell for the same row reads again (no stale read in flight is reused)')
})

t.test('a doorbell that rings during the backlog read is not lost; the first accepted item wins', async (t) => {
  const doorbell = createMemoryDoorbell()
  const poll = longPoll<number>({
    doorbell,
    waitSeconds: 5,
    routes: (e) => e.id !== 2,
    highWater: async () => ({ id: 0, clock: 0 }),
    backlog: async () => {
      await doorbell.publish(event(1))
      await doorbell.publish(event(2))
      await doorbell.publish(event(3))
      return []
    },
    load: async (e) => e.id,
    accepts: (id) => id !== 1
  })
  t.same(await poll, [3])
})

t.test('abort and timeout answer [], and clean up', async (t) => {
  const doorbell = createMemoryDoorbell()
  const controller = new AbortController()
  const spec = { doorbell, signal: controller.signal, routes: () => true, highWater: async () => ({ id: 0, clock: 0 }), backlog: async () => [], load: async () => 1, accepts: () => true }
  const aborted = longPoll<number>({ ...spec, waitSeconds: 30 })
  await new Promise((resolve) => setTimeout(resolve, 10))
  controller.abort()
  t.same(await aborted, [])
  t.same(await longPoll<number>({ ...spec, waitSeconds: 30 }), [], 'an already aborted signal answers at once')
  t.same(await longPoll<number>({ ...spec, signal: undefined, waitSeconds: 0, backlog: async () => null }), [])
  t.equal(doorbell.size, 0)
})

t.test('the waiter registry releases every pending poll at shutdown, then refuses new waits', async (t) => {
  const doorbell = createMemoryDoorbell()
  const waiters = createWaiterRegistry()
  const spec = { doorbell, waiters, waitSeconds: 30, routes: () => true, highWater: async () => ({ id: 0, clock: 0 }), backlog: async () => [], load: async () => 1, accepts: () => true }
  const polls = [longPoll<number>(spec), longPoll<number>(spec)]
  while (waiters.size < 2) await new Promise((resolve) => setImmediate(resolve))
  waiters.releaseAll()
  t.same(await Promise.all(polls), [[], []])
  t.same(await longPoll<number>(spec), [], 'after shutdown: at once')
  t.equal(waiters.size, 0)
  t.equal(doorbell.size, 0)
})
