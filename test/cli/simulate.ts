/**
 * `devicehub simulate` as a real process against a real server: devices registered, commands
 * answered, notifications at the rate, a progress line and a summary; bad arguments refused.
 */
import t from 'tap'
import { runCli } from '../fixtures/cli.js'
import { createTestRig } from '../../lib/testing/index.js'

/** The CLI starts through tsx, which takes seconds on a loaded machine. */
async function registered (rig: Awaited<ReturnType<typeof createTestRig>>, id: string): Promise<boolean> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (await rig.admin.request('GET', `/device/${id}`).then(() => true, () => false)) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

t.test('simulated devices register, answer commands and send notifications at the rate', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const cli = runCli(['simulate', '--url', rig.url, '--devices', '3', '--rate', '20', '--duration', '3s', '--prefix', 'sim-'], { DEVICEHUB_TOKEN: rig.adminToken })
  t.teardown(() => { cli.child.kill() })
  t.ok(await registered(rig, 'sim-3'), 'the devices are registered')
  const sent = await rig.admin.sendCommand('sim-3', { command: 'blink', parameters: { times: 2 } })
  const answered = await rig.admin.waitForUpdate('sim-3', sent.id, { waitTimeout: 10 })
  t.match(answered, { status: 'completed', result: { echo: { times: 2 } } }, 'the simulated device answered')

  t.equal(await cli.exited, 0)
  const summary = JSON.parse(cli.stdout().trim().split('\n').pop()!) as { devices: number, notifications: number, commands: number, errors: number }
  t.equal(summary.devices, 3)
  t.equal(summary.errors, 0)
  t.ok(summary.commands >= 1)
  // At most the rate (20/s for 3 s, plus a tick); the lower bound is loose for a loaded CI machine.
  t.ok(summary.notifications >= 15 && summary.notifications <= 64, `about 20/s for 3 s (${summary.notifications})`)
  t.match(cli.stderr(), /devices 3\/3 connected · [\d.]+ msg\/s · \d+ sent · \d+ commands answered · 0 errors/)
  const stored = await rig.admin.request<unknown[]>('GET', '/device/sim-1/notification', { query: { take: 1000 } })
  t.ok(stored.length >= 10, 'the notifications are on the server')
})

t.test('--transport websocket: each device on its own WebSocket', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const cli = runCli(['simulate', '--url', rig.url, '--devices', '2', '--rate', '5', '--duration', '8s', '--transport', 'websocket', '--prefix', 'wsim-'], { DEVICEHUB_TOKEN: rig.adminToken })
  t.teardown(() => { cli.child.kill() })
  t.ok(await registered(rig, 'wsim-2'))
  const sent = await rig.admin.sendCommand('wsim-2', { command: 'blink', parameters: { n: 1 } })
  t.match(await rig.admin.waitForUpdate('wsim-2', sent.id, { waitTimeout: 10 }), { status: 'completed', result: { echo: { n: 1 } } })
  t.equal(await cli.exited, 0)
  t.match(JSON.parse(cli.stdout().trim().split('\n').pop()!), { devices: 2, errors: 0 })
})

t.test('a wrong password or an unreachable server ends with one clear line and exit 1', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const wrong = runCli(['simulate', '--url', rig.url, '--login', 'dhadmin', '--password', 'not-it', '--duration', '1s'])
  t.equal(await wrong.exited, 1)
  t.match(wrong.stderr(), /POST \/token answered 401/)
  const missing = runCli(['simulate', '--url', rig.url, '--duration', '1s'])
  t.equal(await missing.exited, 1)
  t.match(missing.stderr(), /give --token, or --login and --password/)
  const bad = runCli(['simulate', '--devices', 'many'])
  t.equal(await bad.exited, 1)
  t.match(bad.stderr(), /--devices/)
})
