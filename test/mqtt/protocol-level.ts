/** The protocol level read from a CONNECT's first bytes (lib/mqtt/protocol-level.ts). */
import mqttPacket from 'mqtt-packet'
import t from 'tap'
import { protocolLevel } from '../../lib/mqtt/protocol-level.js'

const connect = (protocolVersion: 3 | 4 | 5): Buffer => mqttPacket.generate({
  cmd: 'connect', protocolVersion, protocolId: protocolVersion === 3 ? 'MQIsdp' : 'MQTT', clientId: 'c'.repeat(300), clean: true, keepalive: 30
}, { protocolVersion })

t.test('3.1, 3.1.1 and 5, whole or cut anywhere before the level', async (t) => {
  for (const version of [3, 4, 5] as const) {
    const bytes = connect(version)
    t.equal(protocolLevel(bytes), version)
    // A remaining length of two bytes (over 127): the level is at 2 + 2 + name length.
    const levelAt = version === 3 ? 11 : 9
    for (let cut = 0; cut <= levelAt; cut++) t.equal(protocolLevel(bytes.subarray(0, cut)), 'more', `${version}, ${cut} bytes`)
  }
})

t.test('not a CONNECT: undefined', async (t) => {
  t.equal(protocolLevel(Buffer.from('GET / HTTP/1.1\r\n')), undefined)
  t.equal(protocolLevel(Buffer.from([0x30, 0x02, 0x00, 0x00])), undefined, 'a PUBLISH first')
  t.equal(protocolLevel(Buffer.from([0x10, 0xff, 0xff, 0xff, 0xff, 0x01])), undefined, 'a length of five bytes')
  t.equal(protocolLevel(Buffer.from([0x10, 0x10, 0x00, 0x09, 0x41])), undefined, 'a protocol name of 9 bytes')
})
