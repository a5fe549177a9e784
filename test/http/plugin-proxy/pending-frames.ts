/**
 * Issue 22, point 4, on the plugin proxy: frames queued and not yet answered are capped; past
 * the cap the connection is closed (1008) and others go on; within it, a pipelined burst is
 * answered in full and in order (reading pauses instead).
 */
import type { Socket } from 'node:net'
import t from 'tap'
import type { ProxyClient } from '../../fixtures/plugin-proxy.js'
import { startProxy } from '../../fixtures/plugin-proxy.js'

/** Sends `count` health requests in one write, so the server reads them before answering any. */
function burst (c: ProxyClient, count: number): void {
  const tcp = (c.ws as unknown as { _socket: Socket })._socket
  tcp.cork()
  for (let i = 0; i < count; i++) c.send({ id: i, t: 'health' })
  tcp.uncork()
}

t.test('a connection that queues more frames than it may is closed with 1008; others go on', async (t) => {
  const p = await startProxy(t, { pluginProxy: { maxPendingFrames: 5 } })
  const bystander = await p.connect()
  const c = await p.connect()
  burst(c, 500)
  t.same(await c.closed, { code: 1008, reason: 'Too many pending messages' })
  t.ok(c.frames.length < 500, `${c.frames.length} of 500 answered`)
  t.equal((await bystander.request({ t: 'health' })).s, 0)
})

t.test('a burst within the cap is answered in full and in order', async (t) => {
  const p = await startProxy(t)
  const c = await p.connect()
  burst(c, 500)
  await c.waitFor((f) => f.id === 499)
  t.same(c.frames.map((f) => f.id), Array.from({ length: 500 }, (_, i) => i))
})
