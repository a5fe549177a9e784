/** The pure parts of plugin delivery: the stored filter as matched, the log cursor codec, the merge by stamp. */
import t from 'tap'
import type { CommandRecord } from '../../../lib/core/commands/command-ports.js'
import type { NotificationRecord } from '../../../lib/core/notifications/notification-ports.js'
import { mergeByStamp } from '../../../lib/core/plugins/plugin-consumer.js'
import { parseStoredFilter } from '../../../lib/core/plugins/plugin-filter.js'
import { pluginSelector } from '../../../lib/core/plugins/plugin-state.js'
import { decodeLogCursor, encodeLogCursor } from '../../../lib/core/realtime/log-cursor.js'
import { selects } from '../../../lib/core/realtime/message-filter.js'
import { routingKeys } from '../../../lib/core/realtime/router.js'

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

t.test('a stored filter is a message selector: the router keys and the one live filter (selects) of streams', async (t) => {
  const at = (deviceId: string, networkId: number | null, deviceTypeId: number | null, name: string) => ({ deviceId, networkId, deviceTypeId, name })
  const networks = pluginSelector(parseStoredFilter('notification/1,2/*/*/*'))
  t.same(routingKeys(['notification'], networks), { kinds: ['notification'], deviceIds: undefined, networkIds: [1, 2], deviceTypeIds: 'all' })
  t.ok(selects(networks, at('d', 1, null, 'temp')))
  t.notOk(selects(networks, at('d', 3, null, 'temp')), 'another network')
  t.notOk(selects(networks, at('d', null, null, 'temp')), 'no network')
  for (const system of ['$device-add', '$device-update', '$device-online', '$device-offline']) {
    t.notOk(selects(networks, at('d', 1, null, system)), `${system}: left out without names (the one system-name list)`)
  }
  const named = pluginSelector(parseStoredFilter('*/*/*/dev-1/$device-online,temp'))
  t.same(routingKeys(['command'], named).deviceIds, ['dev-1'])
  t.ok(selects(named, at('dev-1', null, null, '$device-online')), 'a listed system name is selected')
  t.notOk(selects(named, at('dev-2', null, null, 'temp')), 'another device')
  t.notOk(selects(named, at('dev-1', null, null, 'other')), 'an unlisted name')
  const types = pluginSelector(parseStoredFilter('*/*/7/*/*'), { networkIds: [1], deviceTypeIds: [7, 8] })
  t.same(types.scope, { networkIds: [1], deviceTypeIds: [7] }, 'the filter within the reach')
  t.same(pluginSelector(parseStoredFilter('*/2,3/*/*/*'), { networkIds: [3], deviceTypeIds: 'all' }).scope.networkIds, [3])
})

t.test('mergeByStamp: the kinds in stamp order, cut at the smallest last stamp of a full page', async (t) => {
  const n = (id: number, stamp: number) => ({ id, stamp }) as unknown as NotificationRecord
  const c = (id: number, stamp: number, lastUpdated = stamp) => ({ id, stamp, lastUpdated }) as unknown as CommandRecord
  const open = mergeByStamp([n(1, 10), n(2, 40)], [c(1, 20)], [c(1, 20, 30)], 3)
  t.same(open.items.map((item) => `${item.kind}@${item.stamp}`), ['notification@10', 'command@20', 'command-update@30', 'notification@40'])
  t.equal(open.bound, undefined, 'no page full: everything up to the mark was taken')
  const full = mergeByStamp([n(1, 10), n(2, 20), n(3, 50)], [c(1, 15), c(2, 60)], [], 3)
  t.equal(full.bound, 50)
  t.same(full.items.map((item) => item.stamp), [10, 15, 20, 50], 'nothing after the bound: the next pass reads it in order')
})
