/** P6 over real sockets: cursors on deliveries, replay after a cursor, exactly once across a forced disconnect. */
import t from 'tap'
import { addDevice, call, sleep } from '../../fixtures/messaging.js'
import type { Delivery, ProxyHarness } from '../../fixtures/plugin-proxy.js'
import { registerPlugin, startProxy, subscribed } from '../../fixtures/plugin-proxy.js'

/** `kind:id` of a delivery (updates also carry lastUpdated, each command is updated once here). */
function key ({ event }: Delivery): string {
  if (event.b.notification !== undefined) return `n:${event.b.notification.id}`
  return `${event.b.a === 21 ? 'c' : 'u'}:${event.b.command.id}`
}

t.test('resume after a forced disconnect under concurrent writers: every event exactly once', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const devices = [await addDevice(p.h), await addDevice(p.h)]
  const first = await subscribed(p, plugin)
  const expected = new Set<string>()
  const token = p.h.adminToken

  async function notifications (deviceId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const res = await call(`${p.rest}/device/${deviceId}/notification`, token, { method: 'POST', body: { notification: `w${i}`, parameters: { i } } })
      expected.add(`n:${res.body.id}`)
    }
  }
  async function commands (deviceId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const res = await call(`${p.rest}/device/${deviceId}/command`, token, { method: 'POST', body: { command: `c${i}` } })
      expected.add(`c:${res.body.id}`)
      // Some commands carry a client timestamp from the past: the cursor must not depend on it.
      const update = await call(`${p.rest}/device/${deviceId}/command/${res.body.id}`, token, { method: 'PUT', body: { status: 'done' } })
      t.equal(update.status, 204)
      expected.add(`u:${res.body.id}`)
    }
  }
  async function oldNotifications (deviceId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const res = await call(`${p.rest}/device/${deviceId}/notification`, token, { method: 'POST', body: { notification: `old${i}`, timestamp: '2001-01-01T00:00:00.000' } })
      expected.add(`n:${res.body.id}`)
    }
  }

  const writers = Promise.all([
    notifications(devices[0]!, 150),
    notifications(devices[1]!, 150),
    commands(devices[0]!, 40),
    oldNotifications(devices[1]!, 40)
  ])
  await first.waitDeliveries(60, 30_000)
  // Forced: no close handshake, frames in flight are lost.
  first.ws.terminate()
  const got = [...first.deliveries]
  const cursor = got[got.length - 1]!.cursor
  await sleep(50)

  const second = await p.connect()
  t.equal((await second.authenticate(plugin.accessToken)).s, 0)
  t.equal((await second.subscribe(plugin.topicName, { c: cursor })).s, 0)
  await writers
  const total = expected.size
  const rest = await second.waitDeliveries(total - got.length, 30_000)
  await sleep(300)
  const all = [...got, ...second.deliveries].map(key)
  t.equal(all.length, total, `${got.length} before the disconnect, ${rest.length} after`)
  t.equal(new Set(all).size, all.length, 'nothing repeated')
  t.same(new Set(all), expected, 'nothing lost')
  // Per kind, commit order is kept on each connection.
  for (const list of [got, second.deliveries]) {
    const ids = list.filter((d) => d.event.b.notification !== undefined).map((d) => d.event.b.notification.id)
    t.same(ids, [...ids].sort((a, b) => a - b))
  }
  // A command's insert comes before its update.
  const order = all.filter((k) => !k.startsWith('n:'))
  for (const k of order.filter((k) => k.startsWith('u:'))) t.ok(order.indexOf(`c:${k.slice(2)}`) < order.indexOf(k))
})

t.test('a cursor replays only stored events that match the filter, oldest first, then live', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h, { names: 'keep' })
  const dev = await addDevice(p.h)
  const c = await subscribed(p, plugin)
  await p.h.request('POST', `/device/${dev}/notification`, { body: { notification: 'keep' } })
  const [firstDelivery] = await c.waitDeliveries(1)
  c.close()
  await c.closed
  for (const name of ['keep', 'drop', 'keep']) await p.h.request('POST', `/device/${dev}/notification`, { body: { notification: name } })
  const again = await subscribed(p, plugin, { c: firstDelivery!.cursor })
  await again.waitDeliveries(2)
  await p.h.request('POST', `/device/${dev}/notification`, { body: { notification: 'keep', parameters: { live: true } } })
  const deliveries = await again.waitDeliveries(3)
  await sleep(100)
  t.equal(again.deliveries.length, 3)
  t.same(deliveries.map((d) => d.event.b.notification.notification), ['keep', 'keep', 'keep'])
  t.same(deliveries[2]!.event.b.notification.parameters, { live: true })
  const ids = deliveries.map((d) => d.event.b.notification.id)
  t.ok(ids[0] > firstDelivery!.event.b.notification.id && ids[0] < ids[1] && ids[1] < ids[2])
  // Every delivery's cursor resumes right after it.
  const third = await subscribed(p, plugin, { c: deliveries[1]!.cursor })
  const [next] = await third.waitDeliveries(1)
  t.equal(next!.event.b.notification.id, ids[2])
})

t.test('without a cursor only events after the subscribe reply; a group shares one position', async (t) => {
  const p: ProxyHarness = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const dev = await addDevice(p.h)
  await p.h.request('POST', `/device/${dev}/notification`, { body: { notification: 'before' } })
  const a = await subscribed(p, plugin, { sg: 'g' })
  await p.h.request('POST', `/device/${dev}/notification`, { body: { notification: 'after' } })
  const [d] = await a.waitDeliveries(1)
  t.equal(d!.event.b.notification.notification, 'after')
  // A member joining an existing group continues at the group's position (its cursor is not used).
  const b = await subscribed(p, plugin, { sg: 'g', c: '0.0.0' })
  await p.h.request('POST', `/device/${dev}/notification`, { body: { notification: 'x' } })
  await p.h.request('POST', `/device/${dev}/notification`, { body: { notification: 'y' } })
  await sleep(300)
  t.equal(a.deliveries.length + b.deliveries.length, 3)
})
