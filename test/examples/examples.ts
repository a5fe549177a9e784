import { spawn } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { main as testRig } from '../../examples/test-rig.js'
import { main as embed } from '../../examples/embed-in-fastify.js'
import { main as pluginLogger } from '../../examples/plugin-logger.js'
import { main as mqttDevice } from '../../examples/mqtt-device.js'

const ROOT = join(import.meta.dirname, '..', '..')

t.test('examples/test-rig.ts starts, authenticates and closes', async (t) => {
  const { url, info } = await testRig()
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+\/api\/rest$/)
  t.equal(info.apiVersion, '4.1.0')
  await t.rejects(fetch(`${url}/info`), 'the server is closed afterwards')
})

t.test('examples/embed-in-fastify.ts mounts the plugin beside host routes', async (t) => {
  const { health, info } = await embed()
  t.same(health, { ok: true })
  t.match(info, { apiVersion: '4.1.0', webSocketServerUrl: /\/iot\/api\/websocket$/ })
})

t.test('examples/plugin-logger.ts connects to proxyEndpoint, subscribes and receives a delivery', async (t) => {
  const { proxyEndpoint, events } = await pluginLogger()
  t.match(proxyEndpoint, /^ws:\/\/127\.0\.0\.1:\d+\/api\/plugin\/proxy$/)
  t.match(events, [{ notification: { notification: 'temperature', deviceId: 'thermo-1', parameters: { value: 21.5 } }, a: 10 }])
})

t.test('examples/mqtt-device.ts answers a command over MQTT and publishes telemetry', async (t) => {
  const { update, notification } = await mqttDevice()
  t.match(update, { command: 'set-target', deviceId: 'thermostat-7', status: 'done', result: { target: 21 } })
  t.match(notification, { notification: 'temperature', deviceId: 'thermostat-7', parameters: { celsius: 20.5 } })
})

t.test('examples/firmware-test.ts passes under node:test, examples/firmware-test-tap.ts under tap', async (t) => {
  const run = (args: string[]): Promise<{ code: number | null, out: string }> => new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.on('exit', (code) => resolve({ code, out }))
  })
  // The TAP reporter by name: the default reporter depends on the Node.js line (spec on 24+).
  const nodeTest = await run(['--test', '--test-reporter=tap', 'examples/firmware-test.ts'])
  t.equal(nodeTest.code, 0, nodeTest.out)
  t.match(nodeTest.out, /# pass 2\n# fail 0/)
  const tap = await run(['examples/firmware-test-tap.ts'])
  t.equal(tap.code, 0, tap.out)
  t.match(tap.out, /ok 1 - set-led round trip/)
  t.notMatch(tap.out, /not ok/)
})
