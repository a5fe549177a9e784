/**
 * Issue 22, point 1, on the plugin proxy: frames nested ~5,000 deep (~10 KB) in `id`, `t`, `a`,
 * `p` or a batch element, anonymous and authenticated, get one error reply (`ack`, the reason)
 * and the connection stays; 1 MiB closes just that connection (1009). Afterwards a connection
 * opened before still works, the server answers /info, and nothing stored changed.
 */
import t from 'tap'
import { JSON_TOO_DEEP } from '../../../lib/core/validation.js'
import { DEEP, MIB, deepFrame, nested, nestedObject, storedState } from '../../fixtures/hostile-frames.js'
import type { ProxyClient } from '../../fixtures/plugin-proxy.js'
import { registerPlugin, startProxy, subscribed } from '../../fixtures/plugin-proxy.js'

const DEVICE = 'hostile-proxy-1'
const TOO_DEEP = { t: 'ack', s: 1, p: { m: JSON_TOO_DEEP } }

const tooDeep: Array<[string, string]> = [
  ['nested id', `{"id":${nested(DEEP)},"t":"health"}`],
  ['nested object id', `{"id":${nestedObject(DEEP)},"t":"health"}`],
  ['nested t', `{"id":"x","t":${nested(DEEP)}}`],
  ['nested a', `{"id":"x","t":"plugin","a":${nested(DEEP)}}`],
  ['nested p', `{"id":"x","t":"topic","a":"subscribe","p":${nestedObject(DEEP)}}`],
  ['nested batch element', `[{"id":"b1","t":"health"},${nested(DEEP)}]`],
  ['batch element with nested id', `[{"id":${nested(DEEP)},"t":"health"}]`],
  ['batch nested in itself', nested(DEEP)],
  ['60 KiB nested id', deepFrame('{"t":"health","id":', '}', 60 * 1024)]
]

/** Sends `raw` and resolves with the next frame. */
async function answer (c: ProxyClient, raw: string): Promise<unknown> {
  const seen = c.frames.length
  c.send(raw)
  return c.waitFor((f) => c.frames.indexOf(f) >= seen)
}

t.test('frames nested too deeply get one error reply, anonymous and authenticated; 1 MiB closes that connection only', async (t) => {
  const p = await startProxy(t)
  const { h } = p
  t.equal((await h.request('PUT', `/device/${DEVICE}`, { body: { name: DEVICE } })).status, 204)
  const plugin = await registerPlugin(h, { returnNotifications: 'true' })
  const bystander = await subscribed(p, plugin)
  const before = await storedState(h, DEVICE)

  for (const authenticated of [false, true]) {
    const who = authenticated ? 'authenticated' : 'anonymous'
    const c = await p.connect()
    if (authenticated) t.equal((await c.authenticate(plugin.accessToken)).s, 0)
    for (const [name, raw] of tooDeep) t.same(await answer(c, raw), TOO_DEEP, `${who}: ${name}`)
    t.equal((await c.request({ t: 'health' })).s, 0, `${who}: the connection still answers`)

    const big = await p.connect()
    if (authenticated) t.equal((await big.authenticate(plugin.accessToken)).s, 0)
    big.send(deepFrame('{"t":"health","id":', '}', MIB))
    t.same(await big.closed, { code: 1009, reason: 'Message too big' }, `${who}: 1 MiB`)
    t.equal((await c.request({ t: 'health' })).s, 0, `${who}: another connection goes on`)
  }

  t.equal((await bystander.request({ t: 'health' })).s, 0, 'a connection opened before still works')
  t.equal((await h.request('GET', '/info', { token: null })).status, 200, 'the server answers /info')
  t.same(await storedState(h, DEVICE), before, 'nothing stored changed')
  // And its subscription still delivers.
  t.equal((await h.request('POST', `/device/${DEVICE}/notification`, { body: { notification: 'after' } })).status, 201)
  const [delivery] = await bystander.waitDeliveries(1)
  t.equal(delivery?.event.b.notification.notification, 'after')
})

t.test('within the depth limit, only a string or number id, t and a are echoed', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  for (const authenticated of [false, true]) {
    const c = await p.connect()
    if (authenticated) t.equal((await c.authenticate(plugin.accessToken)).s, 0)
    t.same(await answer(c, `{"id":${nested(300)},"t":"health"}`), { t: 'health', s: 0, p: { prx: 'Available', mb: 'Available', mbfp: '0.00', comm: 'Available' } })
    const badType = await answer(c, `{"id":"x","t":${nestedObject(300)},"a":${nested(300)}}`)
    t.match(badType, { id: 'x', t: 'ack', s: 1 })
    t.notOk(Object.hasOwn(badType as object, 'a'), 'a nested a is not echoed')
    t.same(await answer(c, `{"id":"y","t":"plugin","a":{"b":${nested(300)}}}`), {
      id: 'y', t: 'plugin', s: 1, p: { m: 'Unsupported plugin message action: [object Object]' }
    })
    for (const id of [true, { a: 1 }, [1]]) {
      const reply = await answer(c, JSON.stringify({ id, t: 'health' }))
      t.notOk(Object.hasOwn(reply as object, 'id'), `id ${JSON.stringify(id)} is not echoed`)
    }
    c.send(`[{"id":${nested(300)},"t":"health"},${nested(300)},{"id":"z","t":"health"}]`)
    const last = await c.waitFor((f) => f.id === 'z')
    const batch = c.frames.slice(c.frames.indexOf(last) - 2, c.frames.indexOf(last) + 1)
    t.same(batch.map((f) => [f.id, f.t, f.s]), [[undefined, 'health', 0], [undefined, 'ack', 1], ['z', 'health', 0]], `${authenticated ? 'authenticated' : 'anonymous'} batch`)
  }
})
