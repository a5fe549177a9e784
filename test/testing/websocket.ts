/**
 * The rig over WebSocket: a simulated device on one WebSocket, and the WebSocket faults (cut
 * connections per device, dropped and delayed push frames) observed by a real `ws` client.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

t.test('a WebSocket device whose update got no answer (the socket closed) answers the command again after the reconnect', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  let calls = 0
  const valve = await rig.simulateDevice('valve-1', () => {
    // The first time, the connection drops before the device can send its update.
    if (++calls === 1) rig.faults.disconnectWebSockets({ device: 'valve-1' })
    return { open: true }
  }, { transport: 'websocket' })
  t.match(await valve.command('open', {}, { timeout: 5000 }), { status: 'completed', result: { open: true } })
  t.equal(calls, 2, 'answered again on the new connection')
  t.equal(valve.handled, 1, 'counted once')
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

t.test('the transcript has every WebSocket frame and push of a simulated device, in order, with no token', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-rig-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'rig.jsonl')
  const rig = await createTestRig({ transcript: file })
  const pump = await rig.simulateDevice('tx-pump', { start: (c) => ({ rpm: c.parameters?.rpm ?? 0 }) }, { transport: 'websocket' })
  const first = await pump.command('start', { rpm: 900 }, { timeout: 3000 })
  t.match(first, { status: 'completed' })
  t.equal(rig.faults.disconnectWebSockets({ device: 'tx-pump' }), 1)
  const second = await pump.command('start', { rpm: 300 }, { timeout: 5000 })
  t.match(second, { status: 'completed' }, 'answered after the reconnect')
  // A client under test asking for tokens over the socket: the reply carries them, the transcript must not.
  const client = await connectWebSocket(rig.webSocketUrl, rig.adminToken)
  const minted = await client.request<{ accessToken: string, refreshToken: string }>('token/create', { payload: { userId: 1, actions: ['GetDevice'] } })
  await client.close()
  const secrets = [rig.adminToken, pump.accessToken, pump.refreshToken, minted.accessToken, minted.refreshToken]
  await rig.close()

  const text = await readFile(file, 'utf8')
  const lines = text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  t.ok(lines.every((l) => typeof l.at === 'string'))
  t.ok(lines.filter((l) => l.type === 'frame' || l.type === 'connection').every((l) => l.via === 'websocket'), 'WebSocket entries say so')
  const order: Array<Record<string, unknown>> = [
    { type: 'connection', event: 'open', connection: 1, url: '/api/websocket' },
    { type: 'frame', from: 'client', connection: 1, device: 'tx-pump', frame: { action: 'authenticate', token: '[redacted]' } },
    { type: 'frame', from: 'server', connection: 1, frame: { action: 'authenticate', status: 'success' } },
    { type: 'frame', from: 'client', connection: 1, frame: { action: 'command/subscribe', deviceId: 'tx-pump' } },
    { type: 'frame', from: 'server', connection: 1, frame: { action: 'command/subscribe', status: 'success' } },
    { type: 'push', via: 'websocket', connection: 1, device: 'tx-pump', items: 1, frame: { action: 'command/insert', command: { id: first.id, command: 'start', deviceId: 'tx-pump' } } },
    { type: 'frame', from: 'client', connection: 1, frame: { action: 'command/update', commandId: first.id, command: { status: 'completed' } } },
    { type: 'frame', from: 'server', connection: 1, frame: { action: 'command/update', status: 'success' } },
    { type: 'fault', kind: 'websocket-disconnect', device: 'tx-pump' },
    { type: 'connection', event: 'close', connection: 1, code: 1006 },
    { type: 'connection', event: 'open', connection: 2 },
    { type: 'frame', from: 'client', connection: 2, frame: { action: 'authenticate', token: '[redacted]' } },
    { type: 'push', via: 'websocket', connection: 2, frame: { action: 'command/insert', command: { id: second.id, command: 'start' } } },
    { type: 'frame', from: 'client', connection: 2, frame: { action: 'command/update', commandId: second.id, command: { status: 'completed' } } },
    { type: 'frame', from: 'server', connection: 3, frame: { action: 'token/create', status: 'success', accessToken: '[redacted]', refreshToken: '[redacted]' } }
  ]
  let at = -1
  for (const expected of order) {
    const found = lines.findIndex((l, i) => i > at && matches(l, expected))
    t.ok(found > at, `in order: ${JSON.stringify(expected)}`)
    if (found > at) at = found
  }
  t.notOk(lines.some((l) => JSON.stringify(l.frame ?? {}).includes('"parameters"')), 'bodies are left out, as in HTTP entries')
  for (const secret of secrets) t.notOk(text.includes(secret), 'no token in the transcript')
  t.notOk(/eyJ[\w-]*\.[\w-]+\./.test(text), 'nothing shaped like a JWT either')
})

/** Every key of `expected` matches in `actual`, recursively. */
function matches (actual: unknown, expected: unknown): boolean {
  if (typeof expected !== 'object' || expected === null) return actual === expected
  if (typeof actual !== 'object' || actual === null) return false
  return Object.entries(expected).every(([key, value]) => matches((actual as Record<string, unknown>)[key], value))
}
