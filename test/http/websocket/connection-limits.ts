/**
 * Issue 22, point 4: what one socket may hold. An unauthenticated session is closed after the
 * configured timeout (public actions do not count); subscriptions per socket are capped with a
 * 429 frame; frames queued and not yet answered are capped (close 1008).
 */
import type { Socket } from 'node:net'
import t from 'tap'
import { webSocketRegistry } from '../../../lib/http/websocket/registry.js'
import { createTestApp } from '../../fixtures/app.js'
import { eventually } from '../../fixtures/messaging.js'
import type { TestSocket } from '../../fixtures/websocket.js'
import { connect, connectAs } from '../../fixtures/websocket.js'

/** Resolves with the close code and reason. */
function closeOf (ws: TestSocket): Promise<{ code: number, reason: string }> {
  return new Promise((resolve) => ws.socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
}

t.test('an unauthenticated session is closed after the timeout; authenticated ones stay', async (t) => {
  const h = await createTestApp(t, { webSocket: { authTimeoutMs: 500 } })
  // Authenticated first (header, action), so their timeouts are due before the anonymous one's.
  const header = await connect(t, h, { token: h.adminToken })
  const action = await connectAs(t, h)
  const anonymous = await connect(t, h)
  const closed = closeOf(anonymous)
  // Public actions do not authenticate the session (nor does a failed authenticate).
  anonymous.sendRaw(JSON.stringify({ action: 'server/info' }))
  anonymous.sendRaw(JSON.stringify({ action: 'token', login: 'admin', password: 'wrong' }))
  anonymous.sendRaw(JSON.stringify({ action: 'authenticate', token: 'not-a-token' }))
  t.same(await closed, { code: 1008, reason: 'Authentication timeout' })
  t.equal((await header.request({ action: 'user/getCurrent' })).status, 'success', 'a bearer header on the upgrade authenticates')
  t.equal((await action.request({ action: 'user/getCurrent' })).status, 'success', 'the authenticate action authenticates')
  await eventually(() => webSocketRegistry(h.app).sessions === 2)
})

t.test('subscriptions per socket are capped with a 429 frame; unsubscribing makes room; other sockets are not affected', async (t) => {
  const h = await createTestApp(t, { webSocket: { maxSubscriptions: 3 } })
  const ws = await connectAs(t, h)
  const ids: number[] = []
  for (const action of ['notification/subscribe', 'command/subscribe', 'notification/subscribe']) {
    const reply = await ws.request({ action })
    t.equal(reply.status, 'success')
    ids.push(reply.subscriptionId)
  }
  for (const action of ['notification/subscribe', 'command/subscribe']) {
    const refused = await ws.request({ action })
    t.same(refused, { action, requestId: refused.requestId, code: 429, status: 'error', error: 'Too many subscriptions: at most 3 per connection' })
  }
  t.equal(webSocketRegistry(h.app).subscriptions, 3, 'a refused subscribe holds nothing')
  t.equal((await ws.request({ action: 'notification/unsubscribe', subscriptionId: ids[0] })).status, 'success')
  t.equal((await ws.request({ action: 'notification/subscribe' })).status, 'success', 'room again after an unsubscribe')

  const other = await connectAs(t, h)
  t.equal((await other.request({ action: 'notification/subscribe' })).status, 'success', 'the cap is per socket')
  t.equal((await ws.request({ action: 'subscription/list' })).subscriptions.length, 3)
})

t.test('a socket that queues more frames than it may is closed with 1008; others go on', async (t) => {
  const h = await createTestApp(t, { webSocket: { maxPendingFrames: 5 } })
  const bystander = await connect(t, h)
  const ws = await connect(t, h)
  const closed = closeOf(ws)
  // Pipelined in one write, so the server reads them in one go, before answering any.
  const tcp = (ws.socket as unknown as { _socket: Socket })._socket
  tcp.cork()
  for (let i = 0; i < 500; i++) ws.sendRaw(JSON.stringify({ action: 'server/info', requestId: i }))
  tcp.uncork()
  t.same(await closed, { code: 1008, reason: 'Too many pending messages' })
  t.ok(ws.frames.length < 500, `${ws.frames.length} of 500 answered`)
  t.equal((await bystander.request({ action: 'server/info' })).status, 'success')
  await eventually(() => webSocketRegistry(h.app).sessions === 1)
})

t.test('frames pipelined within the cap are all answered, in order', async (t) => {
  const h = await createTestApp(t, { webSocket: { maxPendingFrames: 1000 } })
  const ws = await connect(t, h)
  const tcp = (ws.socket as unknown as { _socket: Socket })._socket
  tcp.cork()
  for (let i = 0; i < 500; i++) ws.sendRaw(JSON.stringify({ action: 'server/info', requestId: i }))
  tcp.uncork()
  await eventually(() => ws.frames.length === 500)
  t.same(ws.frames.map((f) => f.requestId), Array.from({ length: 500 }, (_, i) => i))
})
