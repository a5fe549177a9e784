/** `devicehub serve --mqtt-port`: the banner's MQTT URLs, off, a busy chosen port (issue #25 point 1). */
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { runCli } from '../fixtures/cli.js'
import { connectMqtt, request } from '../fixtures/mqtt.js'

const PASSWORD = 'cli-admin-password'

t.test('serve prints the MQTT URLs, and a client logs in over them', async (t) => {
  const cli = runCli(['serve', '--db', join(t.testdir(), 'hub.db'), '--port', '0', '--mqtt-port', '0', '--log-level', 'silent'], { DEVICEHUB_ADMIN_PASSWORD: PASSWORD })
  t.teardown(() => { cli.child.kill('SIGKILL') })
  const [, tcp, ws] = await cli.waitFor(/MQTT: (mqtt:\/\/127\.0\.0\.1:\d+) {3}(ws:\/\/127\.0\.0\.1:\d+\/mqtt)/)
  for (const url of [tcp!, ws!]) {
    const client = await connectMqtt(t, url, { username: 'dhadmin', password: PASSWORD })
    t.equal((await request(client, { action: 'server/info' })).status, 'success', url)
  }
  cli.child.kill('SIGTERM')
  t.equal(await cli.exited, 0)
})

t.test('--mqtt-port off: no MQTT; a busy chosen port stops the start; a bad value is refused', async (t) => {
  const holder = createServer()
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
  t.teardown(() => holder.close())
  const port = (holder.address() as AddressInfo).port
  // Three processes at once: each starts tsx, slow on a loaded machine.
  const off = runCli(['serve', '--db', ':memory:', '--port', '0', '--mqtt-port', 'off', '--log-level', 'silent'])
  const busy = runCli(['serve', '--db', ':memory:', '--port', '0', '--log-level', 'silent'], { DEVICEHUB_MQTT_PORT: String(port) })
  const bad = runCli(['serve', '--mqtt-port', 'abc'])
  t.teardown(() => { off.child.kill('SIGKILL'); busy.child.kill('SIGKILL') })

  await off.waitFor(/curl -s -X POST/)
  t.notMatch(off.stderr(), /MQTT/)
  off.child.kill('SIGTERM')

  t.not(await busy.exited, 0)
  t.match(busy.stderr(), new RegExp(`MQTT port ${port} is in use`))
  t.notMatch(busy.stderr(), /created admin/, 'no first-start admin whose password nobody saw')

  t.not(await bad.exited, 0)
  t.match(bad.stderr(), /--mqtt-port/)
  await off.exited
})
