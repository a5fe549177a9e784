/**
 * The ordered bus over the memory bus and a stamp draw the test moves by hand: chained
 * events reach listeners in stamp order, a gap that has settled turns into one resync, and the
 * mark never passes an event not yet released. The real PostgreSQL path is in
 * test/doorbells/out-of-order-commits.ts.
 */
import t from 'tap'
import type { Test } from 'tap'
import type { MessageEvent } from '../../../lib/core/realtime/bus.js'
import { createMemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import { decodeDoorbellEvent, decodeDoorbellEvents } from '../../../lib/doorbells/postgres-doorbell.js'
import { createOrderedBus } from '../../../lib/store/ordering/ordered-bus.js'
import type { DrawHorizon, StampOrder } from '../../../lib/store/ordering/stamp-order.js'
import { eventually, sleep } from '../../fixtures/messaging.js'

/** A draw position the test sets, and a switch for "everything drawn so far has settled". */
type HandDraw = StampOrder & { at: DrawHorizon, settledNow: boolean, checks: number }

function handDraw (horizon: DrawHorizon): HandDraw {
  const draw = {
    at: horizon,
    settledNow: true,
    checks: 0,
    async horizon () {
      return { ...draw.at }
    },
    async settled () {
      draw.checks++
      return draw.settledNow
    }
  }
  return draw
}

const chained = (kind: 'notification' | 'command' | 'command-update', id: number, prev: number, stamp: number): MessageEvent =>
  ({ kind, id, deviceId: 'd', networkId: 1, deviceTypeId: 1, name: 'n', order: { prev, stamp, nextXid: 100 } })

async function setup (t: Test, settleCheckMs = 20) {
  const inner = createMemoryDoorbell()
  const draw = handDraw({ cursor: { clock: 10, notification: 3, command: 4 }, nextXid: 50 })
  const bus = await createOrderedBus(inner, draw, { settleCheckMs })
  t.teardown(() => bus.close())
  const seen: MessageEvent[] = []
  // Message events as released; control events show their kind only.
  bus.subscribe((event) => { seen.push(event as MessageEvent) })
  return { inner, draw, bus, seen }
}

t.test('chained events reach listeners in stamp order; the mark follows what was released', async (t) => {
  const { inner, bus, seen } = await setup(t)
  t.same(bus.mark(), { clock: 10, notification: 3, command: 4 }, 'the first mark is the draw position')
  await inner.publish(chained('notification', 6, 12, 13))
  await inner.publish(chained('command', 5, 11, 12))
  t.same(seen, [], 'nothing before stamp 11 is known')
  t.equal(bus.waiting, 2)
  t.same(bus.mark(), { clock: 10, notification: 3, command: 4 }, 'the mark waits too')
  await inner.publish(chained('notification', 5, 10, 11))
  t.same(seen.map((e) => e.order?.stamp), [11, 12, 13], 'released in stamp order')
  t.same(bus.mark(), { clock: 13, notification: 6, command: 5 })
  t.equal(bus.waiting, 0)
  await inner.publish(chained('notification', 4, 9, 10))
  t.equal(seen.length, 3, 'an event at or below the mark is dropped')
})

t.test('events without a chain link pass at once', async (t) => {
  const { inner, seen } = await setup(t)
  await inner.publish(chained('notification', 6, 12, 13))
  await inner.publish({ kind: 'plugin', pluginId: 1, topic: 'topic' })
  t.same(seen.map((e) => e.kind), ['plugin'])
})

t.test('a gap that has settled becomes one resync; the mark moves to the draw position', async (t) => {
  const { inner, draw, bus, seen } = await setup(t)
  draw.settledNow = false
  // Stamp 11 was drawn by a statement that failed: nothing will ever name 11 as its own.
  await inner.publish(chained('notification', 5, 11, 12))
  await sleep(80)
  t.same(seen, [], 'an unsettled gap waits')
  t.ok(draw.checks >= 2, 'and is checked again')
  draw.at = { cursor: { clock: 12, notification: 5, command: 4 }, nextXid: 60 }
  draw.settledNow = true
  await eventually(() => seen.length === 1)
  t.equal(seen[0]!.kind, 'resync', 'listeners read again instead')
  t.same(bus.mark(), { clock: 12, notification: 5, command: 4 })
  t.equal(bus.waiting, 0, 'the queued event is covered by the re-read')
  await inner.publish(chained('command', 5, 12, 13))
  t.same(seen.map((e) => e.kind), ['resync', 'command'], 'the chain goes on from the new mark')
})

t.test('a resync of the bus underneath resynchronises before it reaches listeners', async (t) => {
  const { inner, draw, bus, seen } = await setup(t)
  draw.at = { cursor: { clock: 30, notification: 9, command: 9 }, nextXid: 70 }
  await inner.publish(chained('notification', 8, 30, 31))
  await inner.publish({ kind: 'resync' })
  await eventually(() => seen.length === 2)
  t.same(seen.map((e) => e.kind), ['resync', 'notification'], 'the re-read first, then what follows the new mark')
  t.same(bus.mark(), { clock: 31, notification: 9, command: 9 })
})

t.test('the ordered bus forwards publish and closes the bus underneath', async (t) => {
  const inner = createMemoryDoorbell()
  const bus = await createOrderedBus(inner, handDraw({ cursor: { clock: 1, notification: 0, command: 0 }, nextXid: 1 }))
  const seen: string[] = []
  bus.subscribe((event) => { seen.push(event.kind) })
  await bus.publish({ kind: 'revoke', userId: 0, what: 'rights' })
  t.same(seen, ['revoke'])
  await bus.close()
  t.equal(inner.size, 0, 'no listener left on the bus underneath')
})

t.test('an own write is released from `written`, in chain order; its NOTIFY after it changes nothing', async (t) => {
  const { inner, bus, seen } = await setup(t)
  const record = { id: 4, notification: 'n', deviceId: 'd', networkId: 1, deviceTypeId: 1, timestamp: 11, parameters: null, stamp: 11 }
  bus.written({ ...chained('notification', 4, 10, 11), record })
  t.same(seen.map((e) => e.order?.stamp), [11], 'released at once: its predecessor was released')
  t.equal(seen[0]!.record, record, 'with the record as written')
  await inner.publish(chained('notification', 4, 10, 11))
  t.equal(seen.length, 1, 'its NOTIFY is a duplicate')

  // Its predecessor is another instance's write, not heard yet: it waits for it.
  bus.written({ ...chained('notification', 6, 12, 13), record: { ...record, id: 6, stamp: 13 } })
  t.equal(bus.waiting, 1)
  await inner.publish(chained('notification', 6, 12, 13))
  t.equal(bus.waiting, 1, 'its NOTIFY arriving meanwhile is queued once')
  await inner.publish(chained('command', 5, 11, 12))
  t.same(seen.map((e) => e.order?.stamp), [11, 12, 13], 'both, in stamp order')
  t.equal(seen.at(-1)!.record?.id, 6, 'the own write, with its record (the NOTIFY did not replace it)')
  t.equal(bus.waiting, 0)
})

t.test('caughtUp waits until this process\'s own acknowledged writes are released, at most the cap', async (t) => {
  const inner = createMemoryDoorbell()
  const bus = await createOrderedBus(inner, handDraw({ cursor: { clock: 10, notification: 3, command: 4 }, nextXid: 50 }), { catchUpMs: 100 })
  t.teardown(() => bus.close())
  await bus.caughtUp()
  const record = { id: 4, notification: 'n', deviceId: 'd', networkId: 1, deviceTypeId: 1, timestamp: 12, parameters: null, stamp: 12 }
  // Its predecessor (stamp 11) is another instance's write whose NOTIFY has not come.
  bus.written({ ...chained('notification', 4, 11, 12), record })
  let caught = false
  const waiting = bus.caughtUp().then(() => { caught = true })
  await sleep(10)
  t.notOk(caught, 'the write is acknowledged but not released yet')
  await inner.publish(chained('command', 5, 10, 11))
  await waiting
  t.equal(bus.mark().clock, 12, 'released once its predecessor came')

  // A write whose link is not known (its event carries none): only its stamp counts.
  bus.written({ ...chained('notification', 5, 12, 13), order: undefined, record: { ...record, id: 5, stamp: 13 } })
  const started = Date.now()
  await bus.caughtUp()
  t.ok(Date.now() - started >= 90, 'a NOTIFY that does not come holds a reader only up to the cap')
  t.equal(bus.mark().clock, 12)
})

t.test('knownAfter: nothing after the newest stamp released per kind and device, never below the last resync', async (t) => {
  const { inner, draw, bus } = await setup(t)
  t.same(bus.knownAfter('command', 'd', 10), [], 'nothing known per device below the first mark')
  t.equal(bus.knownAfter('command', 'd', 9), undefined, 'below it: not known')
  await inner.publish({ ...chained('command', 5, 10, 11), deviceId: 'a' })
  await inner.publish({ ...chained('notification', 4, 11, 12), deviceId: 'a' })
  await inner.publish({ ...chained('command', 6, 12, 13), deviceId: 'b' })
  t.same(bus.knownAfter('command', 'a', 11), [])
  t.same(bus.knownAfter('notification', 'a', 12), [])
  t.same(bus.knownAfter('command', 'b', 13), [])
  t.equal(bus.knownAfter('command', 'b', 12), undefined, 'an event that carried no record: read the store')
  t.same(bus.knownAfter('command-update', 'a', 10), [], 'a kind never released for the device: the floor')
  draw.at = { cursor: { clock: 20, notification: 9, command: 9 }, nextXid: 70 }
  await inner.publish({ kind: 'resync' })
  await eventually(() => bus.mark().clock === 20)
  t.same(bus.knownAfter('command', 'a', 20), [], 'after a resync nothing is known per device below its mark')
  t.equal(bus.knownAfter('command', 'a', 19), undefined)
})

t.test('knownAfter: the one record of a device after a cursor, from the released event, until an update changes it', async (t) => {
  const { inner, bus } = await setup(t)
  const command = (id: number, stamp: number) => ({ id, command: 'n', deviceId: 'a', networkId: 1, deviceTypeId: 1, userId: null,
    parameters: null, lifetime: null, status: null, result: null, timestamp: stamp, lastUpdated: stamp, isUpdated: false, stamp })
  const first = command(5, 11)
  await inner.publish({ ...chained('command', 5, 10, 11), deviceId: 'a', record: first })
  t.same(bus.knownAfter('command', 'a', 10), [first], 'the floor is 10: the newest is the only record after it')
  t.equal(bus.knownAfter('command', 'a', 10)![0], first, 'the record the bus carried')
  const second = command(6, 12)
  await inner.publish({ ...chained('command', 6, 11, 12), deviceId: 'a', record: second })
  t.same(bus.knownAfter('command', 'a', 11), [second])
  t.equal(bus.knownAfter('command', 'a', 10), undefined, 'two records after the cursor: read the store')
  const updated = { ...second, status: 'done', lastUpdated: 13, isUpdated: true }
  await inner.publish({ ...chained('command-update', 6, 12, 13), deviceId: 'a', record: updated })
  t.equal(bus.knownAfter('command', 'a', 11), undefined, 'its update changed the command: read the store')
  t.same(bus.knownAfter('command-update', 'a', 10), [updated], 'the update itself is known')
  t.same(bus.knownAfter('command', 'a', 12), [], 'and nothing newer than it')
})

t.test('an instance of an earlier version reads a packed payload as a gap and resynchronises (rolling upgrade)', async (t) => {
  const { inner, draw, bus, seen } = await setup(t)
  // Stamps 11..13 written by one statement of the new version, in one packed NOTIFY.
  const rows = [['notification', 5, 'a', 1, 1, 'n', null, 10, 11, 100], ['notification', 6, 'b', 1, 1, 'n', null, 11, 12, 100],
    ['notification', 7, 'c', 1, 1, 'n', null, 12, 13, 100]]
  const payload = JSON.stringify(['notification', 7, '', null, null, '', rows, 12, 13, 100])
  // The earlier version's decoder is `decodeDoorbellEvent` unchanged: the header alone.
  const header = decodeDoorbellEvent(payload) as MessageEvent
  t.same(header.order, { prev: 12, stamp: 13, nextXid: 100 }, 'a link whose predecessor no event names')
  t.equal(header.record, undefined, 'the rows are not a record')
  draw.at = { cursor: { clock: 13, notification: 7, command: 4 }, nextXid: 60 }
  await inner.publish(header)
  await eventually(() => seen.length === 1)
  t.same(seen.map((e) => e.kind), ['resync'], 'its listeners read the log again: rows 5..7 are not missed')
  t.same(bus.mark(), { clock: 13, notification: 7, command: 4 })
  t.equal(bus.waiting, 0)
  // The new version delivers every row, each with its own link, released in order.
  const { bus: current, inner: currentInner, seen: currentSeen } = await setup(t)
  for (const event of decodeDoorbellEvents(payload)) await currentInner.publish(event)
  t.same(currentSeen.map((e) => [e.id, e.deviceId, e.order?.stamp]), [[5, 'a', 11], [6, 'b', 12], [7, 'c', 13]])
  t.equal(current.resyncs, 0, 'no resync')
})
