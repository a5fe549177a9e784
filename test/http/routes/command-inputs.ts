/**
 * Issue #23 over real sockets: a command's `lifetime` counts from the server's time, whatever
 * `timestamp` the client sent; `lifetime: 0` and empty strings in nullable fields are read the
 * same way over REST and WebSocket.
 */
import t from 'tap'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, call, listen } from '../../fixtures/messaging.js'
import { connectAs } from '../../fixtures/websocket.js'

const BEFORE = '2020-01-01T00:00:00.000'
const START = Date.UTC(2026, 10, 26, 9, 0, 0)

t.test('lifetime counts from the server time; lifetime 0 is no lifetime over REST and WebSocket', async (t) => {
  let now = START
  const h = await createTestApp(t, { clock: { now: () => now } })
  const base = await listen(t, h)
  const device = await addDevice(h)
  const ws = await connectAs(t, h)
  const rest = async (body: Record<string, unknown>): Promise<number> => {
    const res = await call(`${base}/device/${device}/command`, h.adminToken, { method: 'POST', body: { command: 'c', ...body } })
    t.equal(res.status, 201)
    return res.body.id
  }
  const socket = async (command: Record<string, unknown>): Promise<number> => {
    const reply = await ws.request({ action: 'command/insert', deviceId: device, command: { command: 'c', ...command } })
    t.equal(reply.status, 'success')
    return reply.command.id
  }
  const past = await rest({ lifetime: 5, timestamp: '1970-01-01T00:00:00.000' })
  const future = await rest({ lifetime: 5, timestamp: '9999-12-31T23:59:59.999' })
  const zeroRest = await rest({ lifetime: 0, timestamp: '1970-01-01T00:00:00.000' })
  const zeroSocket = await socket({ lifetime: 0, timestamp: '1970-01-01T00:00:00.000' })
  const pastSocket = await socket({ lifetime: 5, timestamp: '2000-01-01T00:00:00.000' })
  const poll = async (): Promise<number[]> =>
    (await call(`${base}/device/${device}/command/poll?timestamp=${BEFORE}&waitTimeout=0`, h.adminToken)).body.map((c: { id: number }) => c.id)

  t.same(await poll(), [past, future, zeroRest, zeroSocket, pastSocket], 'none expired: their lifetimes count from now, not from 1970')
  now = START + 4_000
  t.same(await poll(), [past, future, zeroRest, zeroSocket, pastSocket], 'still alive 4 s later')
  now = START + 6_000
  t.same(await poll(), [zeroRest, zeroSocket], '6 s later the 5 s ones expired (the 9999 one too); lifetime 0 never expires')

  const get = async (id: number): Promise<Record<string, unknown>> => (await call(`${base}/device/${device}/command/${id}`, h.adminToken)).body
  t.equal((await get(zeroRest)).lifetime, 0, 'REST stores lifetime 0 as 0')
  t.equal((await get(zeroSocket)).lifetime, 0, 'and WebSocket too')
  const listed = await ws.request({ action: 'command/get', deviceId: device, commandId: zeroRest })
  t.equal(listed.command.lifetime, 0)

  // Live: a WebSocket command with lifetime 0 and an old client timestamp is pushed to a subscriber.
  const listener = await connectAs(t, h)
  const sub = await listener.request({ action: 'command/subscribe', deviceId: device })
  t.equal(sub.status, 'success')
  const live = await socket({ lifetime: 0, timestamp: '1970-01-01T00:00:00.000' })
  const [push] = await listener.waitForPushes(1)
  t.same([push!.command.id, push!.command.lifetime], [live, 0], 'pushed live')
})

t.test('empty strings in nullable fields: the same over REST and WebSocket', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  const ws = await connectAs(t, h)
  const fields = { status: '', lifetime: '' }
  const viaRest = await call(`${base}/device/${device}/command`, h.adminToken, { method: 'POST', body: { command: 'c', ...fields } })
  t.equal(viaRest.status, 201)
  const viaSocket = await ws.request({ action: 'command/insert', deviceId: device, command: { command: 'c', ...fields } })
  t.equal(viaSocket.status, 'success')
  const get = async (id: number): Promise<Record<string, unknown>> => (await call(`${base}/device/${device}/command/${id}`, h.adminToken)).body
  const stored = [await get(viaRest.body.id), await get(viaSocket.command.id)]
  t.same(stored.map((c) => [c.status, c.lifetime]), [['', null], ['', null]], 'status "" is kept, lifetime "" is absent, on both')

  t.equal((await call(`${base}/device/${device}/command/${viaRest.body.id}`, h.adminToken, { method: 'PUT', body: { status: '' } })).status, 204)
  const update = await ws.request({ action: 'command/update', deviceId: device, commandId: viaSocket.command.id, command: { status: '' } })
  t.equal(update.status, 'success')
  const updated = [await get(viaRest.body.id), await get(viaSocket.command.id)]
  t.same(updated.map((c) => c.status), ['', ''], 'an update to "" is kept on both')

  const badRest = await call(`${base}/device/${device}/notification`, h.adminToken, { method: 'POST', body: { notification: 'n', parameters: '' } })
  const badSocket = await ws.request({ action: 'notification/insert', deviceId: device, notification: { notification: 'n', parameters: '' } })
  t.same([badRest.status, badRest.body.message], [400, '\'parameters\' must be JSON Object!'])
  t.same([badSocket.code, badSocket.error], [400, '\'parameters\' must be JSON Object!'], 'parameters "" is refused alike')

  const emptyTime = await call(`${base}/device/${device}/notification`, h.adminToken, { method: 'POST', body: { notification: 'n', timestamp: '' } })
  const emptyTimeSocket = await ws.request({ action: 'notification/insert', deviceId: device, notification: { notification: 'n', timestamp: '' } })
  t.same([emptyTime.status, emptyTimeSocket.status], [201, 'success'], 'timestamp "" is no timestamp on both')
})
