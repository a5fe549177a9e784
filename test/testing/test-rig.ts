/**
 * The firmware test-rig toolkit (`devicehub/testing`) driven as a firmware test would: real
 * server on a free port, real HTTP, every helper with its timeouts and error messages.
 */
import t from 'tap'
import { createTestRig, RestError } from '../../lib/testing/index.js'

t.test('a device handle: its own scoped token, URLs, command round trip with a simulated device', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  t.match(rig.url, /^http:\/\/127\.0\.0\.1:\d+\/api\/rest$/)
  t.match(rig.webSocketUrl, /^ws:\/\/127\.0\.0\.1:\d+\/api\/websocket$/)

  const lamp = await rig.simulateDevice('lamp-1', {
    on: (command) => ({ lit: true, level: command.parameters?.level ?? 100 }),
    broken: () => { throw new Error('relay stuck') },
    busy: () => ({ status: 'pending', result: null })
  }, { name: 'Lamp', data: { room: 'lab' } })
  t.equal(lamp.id, 'lamp-1')
  t.equal(lamp.urls.commandPoll, `${rig.url}/device/lamp-1/command/poll`)
  t.equal(lamp.urls.notification, `${rig.url}/device/lamp-1/notification`)

  const done = await lamp.command('on', { level: 40 }, { timeout: 3000 })
  t.match(done, { command: 'on', deviceId: 'lamp-1', status: 'completed', result: { lit: true, level: 40 } })
  t.match(await lamp.command('broken', {}, { timeout: 3000 }), { status: 'failed', result: { error: 'relay stuck' } })
  t.match(await lamp.command('busy', {}, { timeout: 3000 }), { status: 'pending' })
  t.match(await lamp.command('unknown', {}, { timeout: 3000 }), { status: 'failed', result: { error: "no handler for command 'unknown'" } })
  t.equal(lamp.handled, 4)

  const device = await rig.admin.request<{ name: string, data: unknown }>('GET', '/device/lamp-1')
  t.match(device, { name: 'Lamp', data: { room: 'lab' } })

  // The device token is scoped: it cannot manage users or see other networks' devices.
  await t.rejects(lamp.client.request('GET', '/user'), { name: 'RestError', status: 403 }, 'no user management')
  const otherNetwork = await rig.admin.request<{ id: number }>('POST', '/network', { body: { name: 'other' } })
  await rig.admin.putDevice('elsewhere', { name: 'x', networkId: otherNetwork.id })
  const outside = await lamp.client.request('GET', '/device/elsewhere').catch((error: unknown) => error)
  t.ok(outside instanceof RestError && outside.status >= 403, 'another network is out of reach')
})

t.test('command() rejects with the device, the command and the time waited', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const silent = await rig.device('silent-1')
  const started = Date.now()
  await t.rejects(silent.command('reboot', {}, { timeout: 300 }), { message: /^device 'silent-1' did not answer command 'reboot' \(id \d+\) within 300 ms$/ })
  t.ok(Date.now() - started < 3000, 'gives up near the timeout')
})

t.test('expectNotification: by name, predicate or partial object, including earlier ones; notifications()', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const sensor = await rig.device('sensor-1')
  // Sent before anybody looks: found all the same.
  await sensor.notify('booted', { version: '1.2.0' })
  await sensor.notify('temperature', { celsius: 20.5 })
  t.match(await sensor.expectNotification('booted'), { notification: 'booted', parameters: { version: '1.2.0' } })
  t.match(await sensor.expectNotification({ parameters: { celsius: 20.5 } }), { notification: 'temperature' })

  const later = sensor.expectNotification((n) => n.notification === 'temperature' && (n.parameters?.celsius as number) > 30, { timeout: 3000 })
  setTimeout(() => { void sensor.notify('temperature', { celsius: 31 }) }, 100)
  t.match(await later, { parameters: { celsius: 31 } })

  await t.rejects(sensor.expectNotification('booted', { timeout: 200 }), {
    message: "device 'sensor-1' sent no notification 'booted' within 200 ms (received 3: booted, temperature, temperature)"
  }, 'a matched notification is not returned twice')
  await t.rejects(sensor.expectNotification({ parameters: { celsius: 99 } }, { timeout: 100 }), { message: /matching \{"parameters":\{"celsius":99\}\}/ })

  const seen: string[] = []
  for await (const n of sensor.notifications()) {
    seen.push(`${n.notification}:${JSON.stringify(n.parameters)}`)
    if (seen.length === 3) break
  }
  t.same(seen, ['booted:{"version":"1.2.0"}', 'temperature:{"celsius":20.5}', 'temperature:{"celsius":31}'])
})
