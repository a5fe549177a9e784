/**
 * Each fault kind of the test rig observed by a real client over real sockets, scoped to one
 * device or to all, recorded, cleared, and written to the transcript.
 */
import { readFile } from 'node:fs/promises'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createTestRig, RestError } from '../../lib/testing/index.js'

t.test('latency, scoped to one device', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const slow = await rig.device('slow-1')
  const fast = await rig.device('fast-1')
  rig.faults.latency(300, { device: 'slow-1' })
  const started = performance.now()
  await slow.notify('x')
  t.ok(performance.now() - started >= 290, 'the scoped device waits')
  await fast.notify('x')
  await rig.admin.request('GET', '/device/slow-1')
  rig.faults.clear()
  await slow.notify('x')
  // Negatives by the record, not by the clock: a loaded machine is slow anyway.
  t.match(rig.faults.record, [{ kind: 'latency', device: 'slow-1', url: '/api/rest/device/slow-1/notification', detail: '300 ms' }])
  t.equal(rig.faults.record.length, 1, "not another device, not the rig's own requests, not after clear()")
})

t.test('HTTP errors for the next N requests', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const device = await rig.device('err-1')
  rig.faults.failRequests(2, { device: 'err-1', status: 500, message: 'boom' })
  for (let i = 0; i < 2; i++) {
    const error = await device.notify('x').catch((e: unknown) => e)
    t.ok(error instanceof RestError)
    t.match(error, { status: 500, body: { error: 500, message: 'boom' } })
  }
  t.match(await device.notify('x'), { id: Number }, 'the third request passes')
  rig.faults.failRequests(1)
  await t.rejects(device.client.info(), { status: 503, message: /Service unavailable \(injected by the test rig\)/ }, 'unscoped: any request, 503 by default')
  t.equal(rig.faults.record.filter((r) => r.kind === 'http-error').length, 3)
  t.throws(() => rig.faults.failRequests(0), RangeError)
})

t.test('refused connections: per device the request is cut, unscoped the TCP connection', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const device = await rig.device('cut-1')
  rig.faults.refuseConnections(1, { device: 'cut-1' })
  await t.rejects(device.notify('x'), { name: 'TypeError', message: 'fetch failed' }, 'the client sees a network error')
  t.match(await device.notify('x'), { id: Number }, 'only once')

  rig.faults.refuseConnections(2)
  const port = new URL(rig.url).port
  const tcp = (): Promise<string> => new Promise((resolve) => {
    import('node:net').then(({ connect }) => {
      const socket = connect(Number(port), '127.0.0.1')
      let data = ''
      socket.on('data', (chunk) => { data += chunk.toString() })
      socket.on('connect', () => socket.write('GET /api/rest/info HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
      socket.on('close', () => resolve(data))
      socket.on('error', () => {})
    }, () => resolve('import failed'))
  })
  t.equal(await tcp(), '', 'closed without an answer')
  t.equal(await tcp(), '')
  t.match(await tcp(), /^HTTP\/1\.1 200/, 'the third connection is served')
  t.equal(rig.faults.record.filter((r) => r.kind === 'refuse-connection').length, 3)
})

t.test('dropped pushes lose nothing for a client that re-polls by cursor; delayed pushes arrive late', async (t) => {
  const rig = await createTestRig()
  t.teardown(() => rig.close())
  const device = await rig.device('push-1')
  const since = device.since
  rig.faults.dropPushes(1, { device: 'push-1' })
  const poll = device.client.pollNotifications('push-1', { timestamp: since, waitTimeout: 5 })
  setTimeout(() => { void device.notify('reading', { n: 1 }) }, 100)
  await t.rejects(poll, { message: 'fetch failed' }, 'the long poll was cut')
  const again = await device.client.pollNotifications('push-1', { timestamp: since, waitTimeout: 5 })
  t.match(again, [{ notification: 'reading', parameters: { n: 1 } }], 'the re-poll from the same cursor gets it')

  rig.faults.delayPushes(400, { device: 'push-1' })
  const started = performance.now()
  const delayed = await device.client.pollNotifications('push-1', { timestamp: since, waitTimeout: 5 })
  t.equal(delayed.length, 1)
  t.ok(performance.now() - started >= 390, 'held back')
  t.match(rig.faults.record.map((r) => r.kind), ['drop-push', 'delay-push'])
})

t.test('the transcript: requests, pushes and faults as JSON lines, no tokens', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-rig-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'rig.jsonl')
  const rig = await createTestRig({ transcript: file })
  const device = await rig.device('tr-1')
  await device.notify('hello')
  t.match(await device.expectNotification('hello'), { notification: 'hello' })
  rig.faults.failRequests(1, { device: 'tr-1' })
  await t.rejects(device.notify('again'), { name: 'RestError', status: 503 }, 'the injected failure')
  await rig.close()

  const lines = (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  t.ok(lines.every((l) => typeof l.at === 'string'))
  t.ok(lines.some((l) => l.type === 'request' && l.method === 'POST' && l.url === '/api/rest/device/tr-1/notification' && l.status === 201))
  t.ok(lines.some((l) => l.type === 'push' && l.via === 'long-poll' && l.device === 'tr-1' && l.items === 1))
  t.ok(lines.some((l) => l.type === 'fault' && l.kind === 'http-error' && l.device === 'tr-1'))
  t.notOk(lines.some((l) => JSON.stringify(l).includes(rig.adminToken)), 'no token in the transcript')
})
