/** The pure parts of plugin delivery: the stored filter as matched, and the feed cursor codec. */
import t from 'tap'
import { parseStoredFilter } from '../../../lib/core/plugins/plugin-filter.js'
import { decodeLogCursor, encodeLogCursor } from '../../../lib/core/realtime/log-cursor.js'

t.test('parseStoredFilter reads every part of <kinds>/<networkIds>/<deviceTypeIds>/<deviceId>/<names>', async (t) => {
  const all = parseStoredFilter('*/*/*/*/*')
  t.same([...all.kinds].sort(), ['command', 'command-update', 'notification'])
  t.same([all.networkIds, all.deviceTypeIds, all.deviceId, all.names], [undefined, undefined, undefined, undefined])
  const some = parseStoredFilter('command,command_update/1,2/3/*/temp,$device-add')
  t.same([...some.kinds], ['command', 'command-update'])
  t.same(some.networkIds, [1, 2])
  t.same(some.deviceTypeIds, [3])
  t.same(some.names, ['temp', '$device-add'])
  const device = parseStoredFilter('notification/1/2/dev-1/*')
  t.equal(device.deviceId, 'dev-1')
  t.equal(device.networkIds, undefined, 'a device filter ignores networks and types')
  t.equal(device.deviceTypeIds, undefined)
  t.same([...parseStoredFilter('bogus/*/*/*/*').kinds], [], 'an unknown kind matches nothing')
  t.same(parseStoredFilter('*/x/*/*/*').networkIds, [-1], 'an unreadable id matches nothing')
  t.equal(parseStoredFilter('*/*/*/*/*'), all, 'parsed once per string')
})

t.test('feed cursors round-trip; anything else is refused', async (t) => {
  const position = { clock: 1763820000123, notification: 12, command: 3 }
  t.equal(encodeLogCursor(position), '12.3.1763820000123')
  t.same(decodeLogCursor('12.3.1763820000123'), position)
  t.same(decodeLogCursor('0.0.0'), { clock: 0, notification: 0, command: 0 })
  for (const bad of ['', '1.2', '1.2.3.4', 'a.b.c', '-1.2.3', '1.2.3 ', '99999999999999999.0.0', 12, null, {}]) {
    t.equal(decodeLogCursor(bad), undefined, JSON.stringify(bad))
  }
})
