/**
 * Issue 22, point 2, on the plugin proxy: what a subscribed plugin is delivered never reaches
 * further than the token that registered or last updated the plugin. Deliveries come in commit
 * order, so events outside the reach written before one inside would arrive first if they leaked.
 */
import t from 'tap'
import { addDevice } from '../../fixtures/messaging.js'
import type { ProxyClient, ProxyHarness } from '../../fixtures/plugin-proxy.js'
import { registerPlugin, startProxy, subscribed } from '../../fixtures/plugin-proxy.js'
import type { TestContext } from '../../fixtures/store.js'

const HOUR = 3_600_000

interface World {
  p: ProxyHarness
  ax: string
  bx: string
  ay: string
  owner: Awaited<ReturnType<ProxyHarness['h']['createUser']>>
  /** The owner's token restricted to network A and device type X. */
  narrow: string
}

async function world (t: TestContext): Promise<World> {
  const p = await startProxy(t)
  const B = await p.h.store.networks.insert({ name: 'proxy-reach-B', description: null })
  const Y = await p.h.store.deviceTypes.insert({ name: 'proxy-reach-Y', description: null })
  const ax = await addDevice(p.h, 'proxy-ax')
  const bx = await addDevice(p.h, 'proxy-bx', { networkId: B })
  const ay = await addDevice(p.h, 'proxy-ay', { deviceTypeId: Y })
  const owner = await p.h.createUser({ networkIds: [1, B], deviceTypeIds: [1, Y], allDeviceTypesAvailable: false })
  const narrow = p.h.sign({ u: owner.user.id, a: [], n: ['1'], dt: ['1'], e: Date.now() + HOUR, t: 1 })
  return { p, ax, bx, ay, owner, narrow }
}

async function notify (w: World, deviceId: string, notification: string): Promise<void> {
  const res = await w.p.h.request('POST', `/device/${deviceId}/notification`, { body: { notification } })
  if (res.status !== 201) throw new Error(`notify ${res.status} ${res.text}`)
}

async function command (w: World, deviceId: string, name: string): Promise<void> {
  const res = await w.p.h.request('POST', `/device/${deviceId}/command`, { body: { command: name } })
  if (res.status !== 201) throw new Error(`command ${res.status} ${res.text}`)
}

/** `device:name` of every delivery so far. */
function delivered (client: ProxyClient): string[] {
  return client.deliveries.map(({ event }) => {
    const item = event.b.notification ?? event.b.command
    return `${item.deviceId as string}:${(item.notification ?? item.command) as string}`
  })
}

t.test('a plugin registered by a token restricted to A and X is delivered nothing of B or Y', async (t) => {
  const w = await world(t)
  const plugin = await registerPlugin(w.p.h, {}, w.narrow)
  const c = await subscribed(w.p, plugin)
  for (const device of [w.bx, w.ay]) {
    await notify(w, device, 'outside')
    await command(w, device, 'outside')
  }
  await notify(w, w.ax, 'inside')
  await command(w, w.ax, 'inside')
  await c.waitDeliveries(2)
  t.same(delivered(c), [`${w.ax}:inside`, `${w.ax}:inside`], 'only A and X, and the first deliveries are A\'s')

  // Resuming from the first cursor replays within the same reach.
  const again = await subscribed(w.p, plugin, { c: c.deliveries[0]!.cursor })
  await notify(w, w.bx, 'outside-2')
  await notify(w, w.ax, 'inside-2')
  await again.waitDeliveries(2)
  t.same(delivered(again), [`${w.ax}:inside`, `${w.ax}:inside-2`], 'the replay and the live tail alike')
})

t.test('an update by a narrower token narrows a connected plugin at once', async (t) => {
  const w = await world(t)
  // Registered with the owner's login token (A, B and X, Y).
  const plugin = await registerPlugin(w.p.h, {}, w.owner.accessToken)
  const c = await subscribed(w.p, plugin)
  await notify(w, w.bx, 'wide')
  await c.waitDeliveries(1)
  t.same(delivered(c), [`${w.bx}:wide`], 'B while the plugin is wide')

  // Changing only the description keeps the plugin ACTIVE and connected.
  const res = await w.p.h.request('PUT', '/plugin', { token: w.narrow, query: { topicName: plugin.topicName, description: 'narrowed' } })
  t.equal(res.status, 204)
  await notify(w, w.bx, 'after-b')
  await notify(w, w.ay, 'after-y')
  await notify(w, w.ax, 'after-a')
  await c.waitDeliveries(2)
  t.same(delivered(c), [`${w.bx}:wide`, `${w.ax}:after-a`], 'B and Y stop at once')

  // An administrator's token restricted to A narrows its own plugin the same way.
  const adminA = w.p.h.sign({ u: 1, a: [0], n: ['1'], dt: ['*'], e: Date.now() + HOUR, t: 1 })
  const adminPlugin = await registerPlugin(w.p.h, {}, adminA)
  const d = await subscribed(w.p, adminPlugin)
  await notify(w, w.bx, 'admin-b')
  await notify(w, w.ay, 'admin-y')
  await d.waitDeliveries(1)
  t.same(delivered(d), [`${w.ay}:admin-y`], 'the admin plugin gets A (every device type for admin 1), never B')
})
