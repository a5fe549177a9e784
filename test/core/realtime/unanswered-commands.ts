import t from 'tap'
import type { MessageEvent } from '../../../lib/core/realtime/bus.js'
import type { CommandRecord } from '../../../lib/core/realtime/message-records.js'
import type { UnansweredCommands } from '../../../lib/core/realtime/unanswered-commands.js'
import { createUnansweredCommands } from '../../../lib/core/realtime/unanswered-commands.js'

/** The insert stamp of a command heard and still unanswered (a wait's cursor without a lookup). */
const unansweredStamp = (unanswered: UnansweredCommands, id: number, deviceId: string): number | undefined => {
  const heard = unanswered.heard(id, deviceId)
  return heard === undefined || heard.answered ? undefined : heard.stamp
}

const record = (id: number, deviceId = 'd1'): CommandRecord => ({
  id,
  command: 'ping',
  deviceId,
  networkId: 1,
  deviceTypeId: 1,
  userId: 1,
  parameters: null,
  lifetime: null,
  status: null,
  result: null,
  timestamp: 1000 + id,
  lastUpdated: 1000 + id,
  isUpdated: false,
  stamp: 1000 + id
})

const event = (kind: 'command' | 'command-update', r: CommandRecord | undefined, id = r!.id): MessageEvent =>
  ({ kind, id, deviceId: 'd1', networkId: 1, deviceTypeId: 1, name: 'ping', record: r })

t.test('a command heard inserted is unanswered for its device until an update of it is heard', async (t) => {
  const unanswered = createUnansweredCommands()
  t.equal(unansweredStamp(unanswered, 1, 'd1'), undefined, 'nothing heard: read the store')
  unanswered.hear(event('command', record(1)))
  unanswered.hear(event('command', record(2)))
  t.equal(unansweredStamp(unanswered, 1, 'd1'), 1001, 'the insert stamp: the wait cursor')
  t.equal(unansweredStamp(unanswered, 1, 'd2'), undefined, "another device's id is not this device's command")
  unanswered.hear(event('command-update', { ...record(1), isUpdated: true, lastUpdated: 1500 }))
  t.match(unanswered.heard(1, 'd1'), { stamp: 1001, answered: true }, 'answered: its insert stamp stays known (the wait looks for its update after it)')
  unanswered.hear(event('command-update', undefined, 2))
  t.equal(unanswered.heard(2, 'd1')?.answered, true, 'an update without its record answers it too')
  unanswered.hear(event('command', undefined, 3))
  t.equal(unansweredStamp(unanswered, 3, 'd1'), undefined, 'an insert heard without its record is not known')
  unanswered.hear(event('command-update', { ...record(4), isUpdated: true }))
  t.equal(unanswered.heard(4, 'd1'), undefined, 'an update alone never makes a command heard')
})

t.test('a resync, a dropped connection and forget() empty it; deaf from a drop until the resync', async (t) => {
  const unanswered = createUnansweredCommands()
  unanswered.hear(event('command', record(1)))
  unanswered.hear({ kind: 'resync' })
  t.equal(unansweredStamp(unanswered, 1, 'd1'), undefined, 'events may have been lost')
  unanswered.hear(event('command', record(2)))
  unanswered.hear({ kind: 'connection', up: false })
  t.equal(unansweredStamp(unanswered, 2, 'd1'), undefined)
  unanswered.hear(event('command', record(3)))
  unanswered.hear({ kind: 'connection', up: true })
  unanswered.hear(event('command', record(4)))
  t.equal(unansweredStamp(unanswered, 3, 'd1'), undefined, 'not heard while the connection was down')
  t.equal(unansweredStamp(unanswered, 4, 'd1'), undefined, 'nor before the resync that follows the reconnection')
  unanswered.hear({ kind: 'resync' })
  unanswered.hear(event('command', record(5)))
  t.equal(unansweredStamp(unanswered, 5, 'd1'), 1005, 'hears again after the resync')
  unanswered.forget()
  t.equal(unansweredStamp(unanswered, 5, 'd1'), undefined)
  unanswered.hear({ kind: 'plugin', pluginId: 1, topic: 'x' })
  unanswered.hear({ kind: 'revoke', userId: 1, what: 'rights' })
  unanswered.hear({ kind: 'notification', id: 6, deviceId: 'd1', networkId: 1, deviceTypeId: 1, name: 'n' })
  t.equal(unansweredStamp(unanswered, 6, 'd1'), undefined, 'notifications are not commands')
})

t.test('bounded by count and by age, oldest first', async (t) => {
  let now = 0
  const unanswered = createUnansweredCommands({ maxEntries: 3, maxAgeMs: 100, now: () => now })
  for (let id = 1; id <= 4; id++) unanswered.hear(event('command', record(id)))
  t.equal(unansweredStamp(unanswered, 1, 'd1'), undefined, 'the oldest went when the fourth came')
  t.same([2, 3, 4].map((id) => unansweredStamp(unanswered, id, 'd1')), [1002, 1003, 1004])
  now = 50
  unanswered.hear(event('command', record(5)))
  now = 120
  t.equal(unansweredStamp(unanswered, 3, 'd1'), undefined, 'older than maxAgeMs: read the store')
  t.equal(unansweredStamp(unanswered, 5, 'd1'), 1005, 'younger ones stay')
  unanswered.hear(event('command', record(6)))
  t.same([4, 5, 6].map((id) => unansweredStamp(unanswered, id, 'd1')), [undefined, 1005, 1006], 'evicted by age when the next is heard')
})
