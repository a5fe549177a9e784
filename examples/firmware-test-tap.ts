/**
 * The same kind of firmware test under tap: the rig depends on no test framework.
 *
 * Run: node --import tsx examples/firmware-test-tap.ts
 */
import t from 'tap'
import { createTestRig } from '../lib/testing/index.js'
import { startLedFirmware } from './firmware/led-firmware.js'

t.test('set-led round trip', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const device = await rig.device('led-1')
  const firmware = startLedFirmware({ url: device.urls.rest, deviceId: device.id, token: device.accessToken })
  t.teardown(() => firmware.stop())
  t.match(await device.command('set-led', { on: true }), { status: 'done', result: { on: true } })
  t.match(await device.expectNotification('led'), { parameters: { on: true } })
})
