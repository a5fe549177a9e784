/**
 * The rig over WebSocket: a simulated device on one WebSocket, and the WebSocket faults (cut
 * connections per device, dropped and delayed push frames) observed by a real `ws` client.
 */
import t from 'tap'
import { connectWebSocket, createTestRig } from '../../lib/testing/index.js'
import type { Push } from '../../lib/testing/index.js'

t.test('a simulated device over WebSocket answers, survives a cut connection and resumes', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const pump = await rig.simulateDevice('pump-1', { start: (c) => ({ rpm: c.parameters?.rpm ?? 0 }) }, { transport: 'websocket' })
  const bystander = await rig.simulateDevice('pump-2', () => ({}), { transport: 'websocket' })
  t.match(await pump.command('start', { rpm: 1200 }, { timeout: 3000 }), { status: 'completed', result: { rpm: 1200 } })

  t.equal(rig.faults.disconnectWebSockets({ device: 'pump-1' }), 1, 'only the socket that named pump-1')
  t.match(rig.faults.record, [{ kind: 'websocket-disconnect', device: 'pump-1' }])
  // Sent while the device is away: it reconnects, subscribes from its cursor and answers it.
  t.match(await pump.command('start', { rpm: 800 }, { timeout: 5000 }), { status: 'completed', result: { rpm: 800 } })
  t.equal(pump.handled, 2, 'the first command is not answered twice after the reconnect')
  t.match(await bystander.command('ping', {}, { timeout: 3000 }), { status: 'completed' }, 'the other device kept its connection')
})

t.test('WebSocket pushes dropped or delayed per device; an unscoped disconnect cuts all with 1006', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const sensor = await rig.device('ws-sensor')
  const other = await rig.device('ws-other')
  const client = await connectWebSocket(rig.webSocketUrl, rig.adminToken)
  const pushes: Push[] = []
  await client.subscribe('notification/subscribe', {}, (push) => pushes.push(push))
  const names = (): string[] => pushes.map((p) => `${(p.notification as { deviceId: string }).deviceId}:${(p.notification as { notification: string }).notification}`)
  const until = async (n: number): Promise<void> => {
    for (let i = 0; i < 200 && pushes.length < n; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  }

  rig.faults.dropPushes(1, { device: 'ws-sensor' })
  await sensor.notify('lost')
  await other.notify('kept')
  await sensor.notify('after')
  await until(2)
  t.same(names(), ['ws-other:kept', 'ws-sensor:after'], 'one push of ws-sensor was dropped, nothing else')

  rig.faults.delayPushes(300, { device: 'ws-sensor' })
  const started = performance.now()
  await sensor.notify('late')
  await until(3)
  t.ok(performance.now() - started >= 290, 'held back')
  t.same(names().at(-1), 'ws-sensor:late')
  rig.faults.clear()

  t.equal(rig.faults.disconnectWebSockets(), 1)
  t.equal(await client.closed, 1006)
  t.same(rig.faults.record.map((r) => r.kind), ['drop-push', 'delay-push', 'websocket-disconnect'])
})
