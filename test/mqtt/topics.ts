/** DeviceHive's MQTT topics parsed and made (lib/mqtt/mqtt-topics.ts): total on any input. */
import t from 'tap'
import { parseTelemetryTopic, parseTopic, pushTopic, responseTopic, subscriptionOf } from '../../lib/mqtt/mqtt-topics.js'

t.test('parseTopic', async (t) => {
  t.same(parseTopic('dh/request', 'c1'), { kind: 'request' })
  t.same(parseTopic('dh/response/device/get@c1', 'c1'), { kind: 'response', action: 'device/get' })
  t.same(parseTopic('dh/response/device/get@a@b', 'a@b'), { kind: 'response', action: 'device/get' }, 'a client id with @')
  t.match(parseTopic('dh/response/device/get@c2', 'c1'), { kind: 'invalid' }, 'another client\'s replies')
  t.match(parseTopic('dh/response/device/get', 'c1'), { kind: 'invalid' })
  t.same(parseTopic('dh/notification/1/+/d1/#', 'c1'), { kind: 'event', event: 'notification', owner: undefined, filter: { networkId: 1, deviceTypeId: undefined, deviceId: 'd1', name: undefined } })
  t.same(parseTopic('dh/command_update/+/+/x@y/reboot@c1', 'c1'), { kind: 'event', event: 'command_update', owner: 'c1', filter: { networkId: undefined, deviceTypeId: undefined, deviceId: 'x@y', name: 'reboot' } })
  t.same(parseTopic('dh/command/#', 'c1'), { kind: 'event', event: 'command', owner: undefined, filter: { networkId: undefined, deviceTypeId: undefined, deviceId: undefined, name: undefined } })
  t.match(parseTopic('dh/command/abc/#', 'c1'), { kind: 'invalid' }, 'a network level is an id')
  t.match(parseTopic('dh/command/1/2/3/4/5', 'c1'), { kind: 'invalid' })
  t.match(parseTopic('dh/other/1', 'c1'), { kind: 'invalid' })
  t.same(parseTopic('sensors/#', 'c1'), { kind: 'other' })
  t.same(parseTopic('', 'c1'), { kind: 'other' })
})

t.test('subscriptionOf: a device level makes network and device type moot, as devicehive-mqtt', async (t) => {
  t.same(subscriptionOf('notification', { networkId: 1, deviceTypeId: 2, deviceId: 'd', name: 'temp' }), { kind: 'notification', input: { deviceId: 'd', names: ['temp'] } })
  t.same(subscriptionOf('command', { networkId: 1, deviceTypeId: 2 }), { kind: 'command', input: { networkIds: [1], deviceTypeIds: [2] } })
  t.same(subscriptionOf('command_update', {}), { kind: 'command', input: { returnUpdatedCommands: true } })
})

t.test('topics made from messages', async (t) => {
  t.equal(responseTopic('device/get', 'c1'), 'dh/response/device/get@c1')
  t.equal(pushTopic('notification', { networkId: 1, deviceTypeId: 2, deviceId: 'd1', notification: 'temp' }), 'dh/notification/1/2/d1/temp')
  t.equal(pushTopic('command', { networkId: 1, deviceTypeId: null, deviceId: 'a/b', command: 'x+#' }), 'dh/command/1//a_b/x__', 'no level breaks the topic')
  t.same(parseTelemetryTopic('dh/notification/1/1/lamp/temp'), { deviceId: 'lamp', name: 'temp' })
  t.match(parseTelemetryTopic('dh/notification/lamp/temp'), { error: /dh\/notification\/<networkId>/ })
  t.equal(parseTelemetryTopic('dh/request'), undefined)
})
