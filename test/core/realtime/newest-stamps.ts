import t from 'tap'
import type { CommandRecord } from '../../../lib/core/realtime/message-records.js'
import { createNewestStamps } from '../../../lib/core/realtime/newest-stamps.js'
import { createRecentRecords } from '../../../lib/core/realtime/recent-records.js'

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
  const newest = createNewestStamps(createRecentRecords({ now: () => now }))
  const inserted = command(1, 11)
  newest.remember('command', 'd1', 11, 10, inserted)
  const other = { ...command(2, 12), isUpdated: true, lastUpdated: 12 }
  newest.remember('command-update', 'd1', 12, 11, other)
  t.same(newest.knownAfter('command', 'd1', 10), [inserted], 'an update of another command keeps it')
  const updated = { ...inserted, status: 'done', isUpdated: true, lastUpdated: 13 }
  newest.remember('command-update', 'd1', 13, 12, updated)
  t.equal(newest.knownAfter('command', 'd1', 10), undefined, 'its own update drops it: a read finds the new state')
  t.same(newest.knownAfter('command-update', 'd1', 12), [updated], 'updates are known by lastUpdated')
  now = 2_001
  t.equal(newest.knownAfter('command-update', 'd1', 12), undefined, 'older than 2 s: read the store')
  t.same(newest.knownAfter('command-update', 'd1', 13), [], 'the stamps stay known')
})

t.test('recent records: bounded by count and by age, oldest first, whatever their kind', async (t) => {
  let now = 0
  const recent = createRecentRecords({ maxRecords: 3, maxAgeMs: 100, now: () => now })
  for (let id = 1; id <= 3; id++) recent.hold('command', `d${id}`, command(id, id))
  recent.hold('notification', 'd9', { id: 9, notification: 'n', deviceId: 'd9', networkId: 1, deviceTypeId: 1, timestamp: 9, parameters: null, stamp: 9 })
  t.equal(recent.get('command', 'd1'), undefined, 'the oldest went when the fourth came')
  t.same([2, 3].map((id) => recent.get('command', `d${id}`)?.id), [2, 3])
  recent.hold('command', 'd2', command(4, 4))
  t.equal(recent.get('command', 'd2')?.id, 4, 'a newer record of the device takes its place')
  now = 50
  recent.hold('command', 'd5', command(5, 5))
  t.equal(recent.get('command', 'd3'), undefined, 'over the count: the oldest held went')
  t.equal(recent.get('notification', 'd9')?.id, 9)
  now = 120
  t.equal(recent.get('notification', 'd9'), undefined, 'older than maxAgeMs')
  t.equal(recent.get('command', 'd5')?.id, 5)
  recent.clear('command')
  t.equal(recent.get('command', 'd5'), undefined, 'cleared by kind')
  recent.hold('command', 'd6', command(6, 6))
  recent.drop('command', 'd6')
  t.equal(recent.get('command', 'd6'), undefined, 'dropped')
})
