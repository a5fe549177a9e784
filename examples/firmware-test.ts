/**
 * A firmware test written with devicehub's test rig, under node:test (no other framework).
 *
 * Run: node --import tsx --test examples/firmware-test.ts
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createTestRig } from '../lib/testing/index.js'
import { startLedFirmware } from './firmware/led-firmware.js'

test('the LED firmware obeys set-led and reports the new state', async () => {
  await using rig = await createTestRig()
  const device = await rig.device('led-1')
  const firmware = startLedFirmware({ url: device.urls.rest, deviceId: device.id, token: device.accessToken })
  try {
    const command = await device.command('set-led', { on: true }, { timeout: 5000 })
    assert.equal(command.status, 'done')
    assert.deepEqual(command.result, { on: true })
    await device.expectNotification({ notification: 'led', parameters: { on: true } }, { timeout: 5000 })

    const rejected = await device.command('self-destruct', {}, { timeout: 5000 })
    assert.equal(rejected.status, 'rejected')
  } finally {
    await firmware.stop()
  }
})

test('the firmware keeps working through a flaky network', async () => {
  await using rig = await createTestRig()
  const device = await rig.device('led-2')
  const firmware = startLedFirmware({ url: device.urls.rest, deviceId: device.id, token: device.accessToken })
  try {
    rig.faults.failRequests(3, { device: 'led-2', status: 503 })
    rig.faults.latency(100, { device: 'led-2' })
    const command = await device.command('set-led', { on: false }, { timeout: 10_000 })
    assert.deepEqual(command.result, { on: false })
    assert.ok(rig.faults.record.some((fault) => fault.kind === 'http-error'))
  } finally {
    await firmware.stop()
  }
})
