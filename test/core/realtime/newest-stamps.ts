import t from 'tap'
import type { CommandRecord } from '../../../lib/core/realtime/message-records.js'
import { createNewestStamps } from '../../../lib/core/realtime/newest-stamps.js'

const command = (id: number, stamp: number, deviceId = 'd1'): CommandRecord => ({
  id, command: 'c', deviceId, networkId: 1, deviceTypeId: 1, userId: 1, parameters: null, lifetime: null,
  status: null, result: null, timestamp: stamp, lastUpdated: stamp, isUpdated: false, stamp
})

t.test('knownAfter: nothing after the newest, the newest alone after the one before it, else unknown', async (t) => {
  const newest = createNewestStamps()
  newest.forget(100)
  t.same(newest.knownAfter('command', 'd1', 100), [], 'nothing above the floor yet')
  t.equal(newest.knownAfter('command', 'd1', 99), undefined, 'below the floor: unknown')
  const first = command(1, 101)
  newest.remember('command', 'd1', 101, 100, first)
  t.same(newest.knownAfter('command', 'd1', 100), [first])
  newest.remember('command', 'd1', 102, 101, undefined)
  t.equal(newest.knownAfter('command', 'd1', 101), undefined, 'a stamp noted without its record (not yet committed)')
  t.same(newest.knownAfter('command', 'd1', 102), [])
  const third = command(3, 103)
  newest.remember('command', 'd1', 103, 102, third)
  t.same(newest.knownAfter('command', 'd1', 102), [third])
  t.equal(newest.knownAfter('command', 'd1', 101), undefined, 'two after the cursor')
  t.same(newest.knownAfter('command', 'd2', 100), [], 'another device: nothing above the floor')
  newest.forget(200)
  t.equal(newest.knownAfter('command', 'd1', 102), undefined, 'after a resync nothing is known below its mark')
})

t.test('an update drops its command\'s record; records are handed out for a while only', async (t) => {
  let now = 0
  const newest = createNewestStamps(() => now)
  const inserted = command(1, 11)
  newest.remember('command', 'd1', 11, 10, inserted)
  const other = { ...command(2, 12), isUpdated: true, lastUpdated: 12 }
  newest.remember('command-update', 'd1', 12, 11, other)
  t.same(newest.knownAfter('command', 'd1', 10), [inserted], 'an update of another command keeps it')
  const updated = { ...inserted, status: 'done', isUpdated: true, lastUpdated: 13 }
  newest.remember('command-update', 'd1', 13, 12, updated)
  t.equal(newest.knownAfter('command', 'd1', 10), undefined, 'its own update drops it: a read finds the new state')
  t.same(newest.knownAfter('command-update', 'd1', 12), [updated], 'updates are known by lastUpdated')
  now = 10_001
  t.equal(newest.knownAfter('command-update', 'd1', 12), undefined, 'older than 10 s: read the store')
  t.same(newest.knownAfter('command-update', 'd1', 13), [], 'the stamps stay known')
})
