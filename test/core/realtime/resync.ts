/**
 * A `resync` (the doorbell reconnected and may have lost doorbells) makes every parked poll read the
 * store again from its own cursor: items written without a doorbell are still delivered.
 */
import t from 'tap'
import type { BusEvent } from '../../../lib/core/realtime/bus.js'
import type { MemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import type { KyselyStore } from '../../../lib/store/kysely-store.js'
import type { TestApp } from '../../fixtures/app.js'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, eventually, sleep } from '../../fixtures/messaging.js'
import { connectAs } from '../../fixtures/websocket.js'

const RESYNC: BusEvent = { kind: 'resync' }

const doorbellOf = (h: TestApp): MemoryDoorbell => h.hub.bus as MemoryDoorbell

t.test('parked polls answer a resync with what was written without a doorbell', async (t) => {
  const h = await createTestApp(t)
  // The doorbell's own listeners before any poll (an ordering wrapper holds one on PostgreSQL).
  const idle = doorbellOf(h).size
  const device = await addDevice(h)
  const other = await addDevice(h)
  const waited = (await h.request('POST', `/device/${device}/command`, { body: { command: 'waited' } })).body.id as number
  let settled = 0
  const track = <T>(p: Promise<T>): Promise<T> => p.finally(() => { settled++ })
  const notificationPoll = track(h.request('GET', `/device/${device}/notification/poll`, { query: { waitTimeout: 30 } }))
  const commandPoll = track(h.request('GET', `/device/${device}/command/poll`, { query: { waitTimeout: 30 } }))
  const updatePoll = track(h.request('GET', '/device/command/poll', { query: { returnUpdatedCommands: true, waitTimeout: 30 } }))
  const updateWait = track(h.request('GET', `/device/${device}/command/${waited}/poll`, { query: { waitTimeout: 30 } }))
  // Long enough to outlast the steps below on a loaded machine (1 s did not, once, beside a CI run).
  const quiet = track(h.request('GET', `/device/${other}/notification/poll`, { query: { waitTimeout: 3 } }))
  await eventually(() => h.hub.router.size === 5)
  await sleep(50)

  // Straight into the store: no doorbell rings, as if the doorbell had lost it.
  const now = Date.now() + 5
  const notification = await h.store.notifications.insert({ notification: 'silent', deviceId: device, networkId: 1, deviceTypeId: 1, parameters: { a: 1 } }, now)
  const command = await h.store.commands.insert({ command: 'silent', deviceId: device, networkId: 1, deviceTypeId: 1, userId: 1, parameters: null, lifetime: null, status: null, result: null }, now)
  await h.store.commands.update(device, waited, { status: 'Done' }, now + 1)
  await sleep(100)
  t.equal(settled, 0, 'without a doorbell nobody wakes')

  await doorbellOf(h).publish(RESYNC)
  const [n, c, u, w] = await Promise.all([notificationPoll, commandPoll, updatePoll, updateWait])
  t.same(n.body.map((x: { id: number, notification: string }) => [x.id, x.notification]), [[notification.id, 'silent']])
  t.same(c.body.map((x: { id: number, command: string }) => [x.id, x.command]), [[command.id, 'silent']])
  t.same(u.body.map((x: { id: number, status: string }) => [x.id, x.status]), [[waited, 'Done']])
  t.equal(w.status, 200)
  t.same([w.body.id, w.body.status], [waited, 'Done'])
  t.equal(settled, 4, 'a poll with nothing new keeps waiting')
  t.same((await quiet).body, [], 'and times out as usual')
  t.equal(h.hub.router.size, 0, 'no listener left behind')
  t.equal(doorbellOf(h).size, idle, 'the routing index left the doorbell')
})

t.test('a WebSocket subscription gets every row a resync finds, past a page of the read', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const ws = await connectAs(t, h)
  t.equal((await ws.request({ action: 'notification/subscribe', deviceId: device })).status, 'success')
  // Straight into the store: 250 notifications whose doorbells were lost, more than two read pages.
  const now = Date.now() + 5
  const written: number[] = []
  for (let i = 0; i < 250; i++) {
    const row = await h.store.notifications.insert({ notification: `lost-${i}`, deviceId: device, networkId: 1, deviceTypeId: 1, parameters: null }, now + i)
    written.push(row.id)
  }
  await doorbellOf(h).publish(RESYNC)
  const pushes = await ws.waitForPushes(250)
  t.same(pushes.map((p) => p.notification.id), written, 'every row once, in order')
  await sleep(100)
  t.equal(ws.pushes.length, 250, 'nothing twice')
})

t.test('a resync checks a wait\'s rights past the read cache: a change no event told of ends it', async (t) => {
  const h = await createTestApp(t)
  const networkId = (await h.request('POST', '/network', { body: { name: 'stale' } })).body.id as number
  const device = await addDevice(h, undefined, { networkId })
  const user = await h.createUser({ networkIds: [networkId], allDeviceTypesAvailable: true })
  const parked = h.hub.stats.parkedPolls
  const poll = h.request('GET', `/device/${device}/notification/poll`, { token: user.accessToken, query: { waitTimeout: 30 } })
  await eventually(() => h.hub.stats.parkedPolls === parked + 1)
  // The user's rows in the read cache, fresh: then its network goes past every repository (no
  // invalidation, no revoke), as a change of another instance does while this one's bus is down.
  t.equal((await h.request('GET', `/device/${device}`, { token: user.accessToken })).status, 200)
  const db = (h.store as KyselyStore).db
  await db.deleteFrom('user_networks').where('user_id', '=', user.user.id).execute()
  await h.store.notifications.insert({ notification: 'unseen', deviceId: device, networkId, deviceTypeId: 1, parameters: null }, Date.now() + 5)
  t.equal((await h.request('GET', `/device/${device}`, { token: user.accessToken })).status, 200, 'the cache still holds the network')
  await doorbellOf(h).publish(RESYNC)
  t.same((await poll).body, [], 'the poll answers [] instead of the notification of the network it lost')
})

t.test('a revoke or a resync drops the read cache: the next request reads the rights another instance changed', async (t) => {
  const h = await createTestApp(t)
  const db = (h.store as KyselyStore).db
  for (const event of [{ kind: 'revoke', what: 'rights' } as const, RESYNC]) {
    const networkId = (await h.request('POST', '/network', { body: { name: `cache-${event.kind}` } })).body.id as number
    const device = await addDevice(h, undefined, { networkId })
    const user = await h.createUser({ networkIds: [networkId], allDeviceTypesAvailable: true })
    t.equal((await h.request('GET', `/device/${device}`, { token: user.accessToken })).status, 200)
    // Past every repository, as another instance's change is: nothing here invalidates.
    await db.deleteFrom('user_networks').where('user_id', '=', user.user.id).execute()
    t.equal((await h.request('GET', `/device/${device}`, { token: user.accessToken })).status, 200, `${event.kind}: the cache still holds the network`)
    // Heard once a listener subscribed after the hub's hears it (over PostgreSQL the bus hands a
    // resync on after the ordering has moved to its horizon).
    const heard = new Promise<void>((resolve) => {
      const off = h.hub.bus.subscribe((e) => { if (e.kind === event.kind) { off(); resolve() } })
    })
    await h.hub.bus.publish(event.kind === 'revoke' ? { ...event, userId: user.user.id } : event)
    await heard
    t.equal((await h.request('GET', `/device/${device}`, { token: user.accessToken })).status, 403, `${event.kind}: read again at once`)
  }
})
