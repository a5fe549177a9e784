/**
 * Device presence over HTTP: `lastSeen` / `online` in device views, the `online` filter, the
 * device-authored activities that count, real-time connections (the core API the WebSocket and
 * SSE adapters call) and the opt-in `$device-online` / `$device-offline` notifications (R3).
 */
import t from 'tap'
import type { Clock } from '../../lib/core/time.js'
import { createTestApp } from '../fixtures/app.js'
import { listen, sleep } from '../fixtures/messaging.js'
import { connect } from '../fixtures/websocket.js'

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/

function manualClock (start = Date.now()): Clock & { advance(ms: number): void } {
  let now = start
  return { now: () => now, advance: (ms) => { now += ms } }
}

t.test('device views carry lastSeen and online; device activity moves them', async (t) => {
  const clock = manualClock()
  const h = await createTestApp(t, { clock, presence: { windowMs: 10_000 } })
  for (const id of ['dev-a', 'dev-b', 'dev-c']) t.equal((await h.request('PUT', `/device/${id}`, { body: { name: id } })).status, 204)

  const fresh = await h.request('GET', '/device/dev-a')
  t.equal(fresh.status, 200)
  t.same(fresh.body, { id: 'dev-a', name: 'dev-a', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false, lastSeen: null, online: false },
    'registering is not device activity: never seen, offline')

  t.equal((await h.request('POST', '/device/dev-a/notification', { body: { notification: 'temp', parameters: { c: 1 } } })).status, 201)
  const seen = await h.request('GET', '/device/dev-a')
  t.match(seen.body.lastSeen, TS)
  t.equal(seen.body.online, true, 'a notification makes the device online')

  // A command update (the device answering) and a command poll count too.
  const command = await h.request('POST', '/device/dev-b/command', { body: { command: 'go' } })
  t.equal((await h.request('GET', '/device/dev-b')).body.online, false, 'a command sent TO a device is not its activity')
  t.equal((await h.request('PUT', `/device/dev-b/command/${command.body.id as number}`, { body: { status: 'done' } })).status, 204)
  t.equal((await h.request('GET', '/device/dev-b')).body.online, true, 'the command update counts')
  t.equal((await h.request('GET', '/device/dev-c/command/poll', { query: { waitTimeout: 0 } })).status, 200)
  t.equal((await h.request('GET', '/device/dev-c')).body.online, true, 'the command poll counts')

  const online = await h.request('GET', '/device', { query: { online: true } })
  t.same(online.body.map((d: { id: string }) => d.id), ['dev-a', 'dev-b', 'dev-c'])
  t.ok(online.body.every((d: { online: boolean }) => d.online))
  t.same((await h.request('GET', '/device', { query: { online: false } })).body, [])
  t.same((await h.request('GET', '/device/count', { query: { online: true } })).body, { count: 3 })

  // Past the window: offline, lastSeen kept.
  clock.advance(10_001)
  const later = await h.request('GET', '/device/dev-a')
  t.equal(later.body.online, false)
  t.equal(later.body.lastSeen, seen.body.lastSeen, 'lastSeen stays')
  t.same((await h.request('GET', '/device', { query: { online: 'false', sortField: 'name' } })).body.map((d: { id: string }) => d.id), ['dev-a', 'dev-b', 'dev-c'])
  t.same((await h.request('GET', '/device/count', { query: { online: 'true' } })).body, { count: 0 })

  // Throttle: a second notification right away writes nothing new; after a few seconds it does.
  t.equal((await h.request('POST', '/device/dev-a/notification', { body: { notification: 'temp' } })).status, 201)
  const first = (await h.request('GET', '/device/dev-a')).body.lastSeen
  clock.advance(1000)
  await h.request('POST', '/device/dev-a/notification', { body: { notification: 'temp' } })
  t.equal((await h.request('GET', '/device/dev-a')).body.lastSeen, first, 'written at most once per throttle period')
  clock.advance(5000)
  await h.request('POST', '/device/dev-a/notification', { body: { notification: 'temp' } })
  t.not((await h.request('GET', '/device/dev-a')).body.lastSeen, first, 'written again after the throttle period')
})

t.test('a real-time connection keeps a device online while it is open', async (t) => {
  const clock = manualClock()
  const h = await createTestApp(t, { clock, presence: { windowMs: 5000 } })
  t.equal((await h.request('PUT', '/device/streamer', { body: { name: 'streamer' } })).status, 204)
  const closed = h.hub.presence.connectionOpened('streamer')
  t.equal((await h.request('GET', '/device/streamer')).body.online, true, 'online at once')
  clock.advance(60_000)
  t.equal((await h.request('GET', '/device/streamer')).body.online, true, 'online as long as the connection is open')
  closed()
  closed()
  await h.hub.presence.stop()
  const after = await h.request('GET', '/device/streamer')
  t.equal(after.body.online, true, 'just closed: seen at the close')
  clock.advance(5001)
  t.equal((await h.request('GET', '/device/streamer')).body.online, false, 'offline once the window passed')
})

t.test('the heartbeat refreshes every open connection, one statement per 200 devices', async (t) => {
  // Real time: the heartbeat is a timer (a third of the window: 1 s here).
  const h = await createTestApp(t, { presence: { windowMs: 3000, notifications: true } })
  t.equal((await h.request('PUT', '/device/beat-0', { body: { name: 'beat-0' } })).status, 204)
  const { networkId, deviceTypeId } = (await h.request('GET', '/device/beat-0')).body
  const ids = Array.from({ length: 450 }, (_, i) => `beat-${i}`)
  await h.hub.store.transaction(async (tx) => {
    for (const id of ids.slice(1)) await tx.devices.insert({ id, name: id, data: null, networkId, deviceTypeId, isBlocked: false })
  })
  const presence = h.hub.store.presence
  const refresh = presence.refresh.bind(presence)
  const lists: number[] = []
  let release = (): void => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  let beats = 0
  // Noted once done: on PostgreSQL a statement is still running when it has been called.
  presence.refresh = async (deviceIds, now, freshSince) => {
    const refreshed = await refresh(deviceIds, now, freshSince)
    lists.push(deviceIds.length)
    if (deviceIds.length === 50 && ++beats === 4) release()
    return refreshed
  }
  // As on a loaded machine, the devices' first transactions wait past the window (four heartbeats),
  // and the heartbeats meanwhile find none of them online.
  const transaction = h.hub.store.transaction.bind(h.hub.store)
  let transactions = 0
  let running = 0
  let mostAtOnce = 0
  h.hub.store.transaction = async (work) => {
    transactions++
    mostAtOnce = Math.max(mostAtOnce, ++running)
    try {
      await released
      return await transaction(work)
    } finally {
      running--
    }
  }
  const closers = ids.map((id) => h.hub.presence.connectionOpened(id))
  // Opening each connection marks its device online, one device at a time.
  while ((await presence.lastSeen(ids)).size < ids.length) await sleep(50)
  lists.length = 0
  const seen = await presence.lastSeen(ids)
  const whole = /200,200,50/
  for (let i = 0; i < 300 && !whole.test(lists.join(',')); i++) await sleep(100)
  // At least one whole heartbeat: two statements of 200 devices and one of 50, and no device alone.
  t.match(lists.join(','), whole, `a heartbeat refreshes 450 open connections in three statements (${lists.join(', ')})`)
  t.notOk(lists.includes(1), 'never one device at a time')
  // The heartbeats during the wave left each device to the write marking it online, which wrote
  // the time of writing: nothing had expired by the next heartbeat.
  t.equal(transactions, ids.length, 'one transaction per device coming online')
  t.equal(mostAtOnce, 2, 'two at a time: the rest waited in the presence service, not in the pool')
  const history = await h.request('GET', '/device/beat-3/notification', { query: { sortField: 'timestamp' } })
  t.same(history.body.map((n: { notification: string }) => n.notification), ['$device-online'], 'online once, never offline')
  // The statements counted may include one that committed before `seen` was read (it was noted
  // after the lists were cleared): its devices move at the next heartbeat, a second later.
  const moved = async (): Promise<boolean> => {
    const after = await presence.lastSeen(ids)
    return ids.every((id) => after.get(id)! > seen.get(id)!)
  }
  for (let i = 0; i < 100 && !(await moved()); i++) await sleep(100)
  t.ok(await moved(), 'every device refreshed')

  // One connection closes; past the window the background sweep announces only its device offline.
  closers[7]!()
  const lastOf = async (id: string): Promise<string | undefined> =>
    (await h.request('GET', `/device/${id}/notification`, { query: { sortField: 'timestamp', sortOrder: 'DESC', take: 1 } })).body[0]?.notification
  for (let i = 0; i < 100 && await lastOf('beat-7') !== '$device-offline'; i++) await sleep(100)
  t.equal(await lastOf('beat-7'), '$device-offline', 'the closed one went offline')
  t.equal(await lastOf('beat-8'), '$device-online', 'the heartbeat kept the open ones fresh')
  t.equal(await h.hub.presence.sweep(), 0, 'nothing else expired')
  for (const close of closers) close()
})

t.test('an SSE stream of one device\'s commands keeps it online; a notification stream does not', async (t) => {
  const clock = manualClock()
  const h = await createTestApp(t, { clock, presence: { windowMs: 5000 } })
  t.equal((await h.request('PUT', '/device/sse-dev', { body: { name: 'sse' } })).status, 204)
  const url = await listen(t, h)
  const headers = { authorization: `Bearer ${h.adminToken}` }
  const online = async (): Promise<boolean> => (await h.request('GET', '/device/sse-dev')).body.online

  const watching = new AbortController()
  const notifications = await fetch(`${url}/device/sse-dev/notification/stream`, { headers, signal: watching.signal })
  t.equal(notifications.status, 200)
  t.equal(await online(), false, 'a client watching notifications is not the device')
  watching.abort()

  const updates = new AbortController()
  t.equal((await fetch(`${url}/device/sse-dev/command/stream?returnUpdatedCommands=true`, { headers, signal: updates.signal })).status, 200)
  t.equal(await online(), false, 'watching command updates is what clients do')
  updates.abort()

  const device = new AbortController()
  const stream = await fetch(`${url}/device/sse-dev/command/stream`, { headers, signal: device.signal })
  t.equal(stream.status, 200)
  t.equal(await online(), true, 'the device listening for its commands is online')
  clock.advance(60_000)
  t.equal(await online(), true, 'for as long as the stream is open')
  device.abort()
  for (let i = 0; i < 200 && (await h.request('GET', '/device/sse-dev')).body.lastSeen !== new Date(clock.now()).toISOString().replace('Z', ''); i++) await sleep(10)
  clock.advance(5001)
  t.equal(await online(), false, 'offline once the window after the close passed')
})

t.test('a WebSocket command/subscribe for one device keeps it online until unsubscribed or closed', async (t) => {
  const clock = manualClock()
  const h = await createTestApp(t, { clock, presence: { windowMs: 5000 } })
  t.equal((await h.request('PUT', '/device/ws-dev', { body: { name: 'ws' } })).status, 204)
  const online = async (): Promise<boolean> => (await h.request('GET', '/device/ws-dev')).body.online
  const ws = await connect(t, h, { token: h.adminToken })
  const all = await ws.request({ action: 'command/subscribe' })
  t.equal(all.status, 'success')
  t.equal(await online(), false, 'a subscription to every device is not one device being present')
  const own = await ws.request({ action: 'command/subscribe', deviceId: 'ws-dev' })
  t.equal(own.status, 'success')
  t.equal(await online(), true, 'the device subscribed to its commands: online')
  clock.advance(60_000)
  t.equal(await online(), true, 'still online while subscribed')
  await ws.close()
  for (let i = 0; i < 200 && (await h.request('GET', '/device/ws-dev')).body.lastSeen !== new Date(clock.now()).toISOString().replace('Z', ''); i++) await sleep(10)
  clock.advance(5001)
  t.equal(await online(), false, 'closing the socket ends the subscription: offline after the window')
})

t.test('the online filter is validated and scoped', async (t) => {
  const h = await createTestApp(t)
  t.equal((await h.request('GET', '/device', { query: { online: 'maybe' } })).status, 400)
  t.equal((await h.request('GET', '/device/count', { query: { online: '2' } })).status, 400)
  t.equal((await h.request('GET', '/device', { query: { online: true }, token: null })).status, 401)
  t.equal((await h.request('PUT', '/device/mine', { body: { name: 'mine' } })).status, 204)
  await h.request('POST', '/device/mine/notification', { body: { notification: 'x' } })
  const outsider = await h.createUser({})
  t.same((await h.request('GET', '/device', { query: { online: true }, token: outsider.accessToken })).body, [], 'online devices of other networks stay hidden')
  // Its login token names only its own networks (none): restricted, so 403 whether or not the device exists (D7).
  t.equal((await h.request('GET', '/device/mine', { token: outsider.accessToken })).status, 403)
})

t.test('$device-online / $device-offline are opt-in and only go to polls that name them (R3)', async (t) => {
  const clock = manualClock()
  const off = await createTestApp(t, { clock })
  t.equal((await off.request('PUT', '/device/quiet', { body: { name: 'quiet' } })).status, 204)
  await off.request('POST', '/device/quiet/notification', { body: { notification: 'x' } })
  clock.advance(120_000)
  t.equal(await off.hub.presence.sweep(), 0, 'without the option the sweep announces nothing')
  const quiet = await off.request('GET', '/device/quiet/notification', { query: { sortOrder: 'ASC' } })
  t.same(quiet.body.map((n: { notification: string }) => n.notification), ['$device-add', 'x'], 'no presence notifications by default')

  const h = await createTestApp(t, { clock, presence: { windowMs: 2000, notifications: true } })
  t.equal((await h.request('PUT', '/device/loud', { body: { name: 'loud' } })).status, 204)
  const start = new Date(clock.now() - 1).toISOString().replace('Z', '')
  t.equal((await h.request('POST', '/device/loud/notification', { body: { notification: 'hello' } })).status, 201)
  const names = async (): Promise<string[]> =>
    (await h.request('GET', '/device/loud/notification', { query: { sortField: 'timestamp', sortOrder: 'ASC' } })).body.map((n: { notification: string }) => n.notification)
  t.same(await names(), ['$device-add', '$device-online', 'hello'], '$device-online before the notification that brought the device online')

  clock.advance(1000)
  t.equal(await h.hub.presence.sweep(), 0, 'still inside the window')
  clock.advance(1500)
  t.equal(await h.hub.presence.sweep(), 1, 'window passed: one device announced offline')
  t.equal(await h.hub.presence.sweep(), 0, 'announced once')
  const all = (await h.request('GET', '/device/loud/notification', { query: { sortField: 'timestamp', sortOrder: 'ASC' } })).body
  const offline = all.find((n: { notification: string }) => n.notification === '$device-offline')
  t.match(offline, { deviceId: 'loud', networkId: 1, deviceTypeId: 1, parameters: { online: false, lastSeen: TS } }, 'network and device type as R3 wants')

  // Polls: without names they are skipped; naming them delivers them.
  const plain = await h.request('GET', '/device/loud/notification/poll', { query: { timestamp: start, waitTimeout: 0 } })
  t.same(plain.body.map((n: { notification: string }) => n.notification), ['hello'])
  const named = await h.request('GET', '/device/loud/notification/poll', { query: { timestamp: start, waitTimeout: 0, names: '$device-online,$device-offline' } })
  t.same(named.body.map((n: { notification: string }) => n.notification), ['$device-online', '$device-offline'])

  // Clients cannot forge them.
  const forged = await h.request('POST', '/device/loud/notification', { body: { notification: '$device-online' } })
  t.equal(forged.status, 403)

  // Back online after being announced offline.
  await h.request('GET', '/device/loud/command/poll', { query: { waitTimeout: 0 } })
  t.same((await names()).filter((n) => n.startsWith('$device-o')), ['$device-online', '$device-offline', '$device-online'])
})

t.test('$device-online rings the doorbell: a parked poll naming it wakes up', async (t) => {
  const h = await createTestApp(t, { presence: { windowMs: 60_000, notifications: true } })
  t.equal((await h.request('PUT', '/device/waker', { body: { name: 'waker' } })).status, 204)
  const parked = h.request('GET', '/device/notification/poll', { query: { names: '$device-online', waitTimeout: 20 } })
  const plain = h.request('GET', '/device/waker/notification/poll', { query: { waitTimeout: 1 } })
  await sleep(300)
  const started = Date.now()
  t.equal((await h.request('GET', '/device/waker/command/poll', { query: { waitTimeout: 0 } })).status, 200)
  const woken = await parked
  t.ok(Date.now() - started < 5000, 'woken by the doorbell, not by the timeout')
  t.match(woken.body, [{ notification: '$device-online', deviceId: 'waker', parameters: { online: true } }])
  t.same((await plain).body, [], 'a poll that does not name it is not woken by it (R3)')
})

t.test('presence settings are checked', async (t) => {
  await t.rejects(createTestApp(t, { presence: { windowMs: 10 } }), /at least 1 s/)
})
