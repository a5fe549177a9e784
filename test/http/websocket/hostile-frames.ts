/**
 * Issue 22, point 1: no frame stops the process. Frames nested ~5,000 deep (~10 KB) and 1 MiB
 * in `requestId`, `action`, a payload, on every WebSocket API endpoint, anonymous and
 * authenticated: each gets a clear error frame, the socket stays usable, a socket opened before
 * still works, the server answers /info, and nothing stored changed.
 */
import t from 'tap'
import { JSON_TOO_DEEP } from '../../../lib/core/validation.js'
import { createTestApp } from '../../fixtures/app.js'
import { DEEP, MIB, deepFrame, nested, nestedObject, storedState } from '../../fixtures/hostile-frames.js'
import { connect } from '../../fixtures/websocket.js'

const DEVICE = 'hostile-frames-1'
const TOO_DEEP = { code: 400, status: 'error', error: JSON_TOO_DEEP }

/** Frames nested past the limit: answered without being parsed. */
const tooDeep: Array<[string, string]> = [
  ['nested requestId', `{"action":"server/info","requestId":${nested(DEEP)}}`],
  ['nested object requestId', `{"action":"server/info","requestId":${nestedObject(DEEP)}}`],
  ['nested action', `{"action":${nested(DEEP)},"requestId":"r"}`],
  ['unknown action, nested requestId', `{"action":"no/such","requestId":${nested(DEEP)}}`],
  ['nested notification parameters', `{"action":"notification/insert","deviceId":"${DEVICE}","notification":{"notification":"x","parameters":{"p":${nested(DEEP)}}}}`],
  ['nested command parameters', `{"action":"command/insert","deviceId":"${DEVICE}","command":{"command":"x","parameters":${nestedObject(DEEP)}}}`],
  ['1 MiB nested requestId', deepFrame('{"action":"server/info","requestId":', '}', MIB)],
  ['1 MiB nested action', deepFrame('{"action":', ',"requestId":1}', MIB)]
]

t.test('frames nested too deeply get a 400 on every endpoint, anonymous and authenticated; nothing else moves', async (t) => {
  const h = await createTestApp(t)
  t.equal((await h.request('PUT', `/device/${DEVICE}`, { body: { name: DEVICE } })).status, 204)
  t.equal((await h.request('POST', `/device/${DEVICE}/notification`, { body: { notification: 'before' } })).status, 201)
  const before = await storedState(h, DEVICE)
  const bystander = await connect(t, h, { token: h.adminToken })

  for (const path of ['/api/websocket', '/websocket', '/api/rest/websocket']) {
    for (const token of [undefined, h.adminToken]) {
      const who = `${path} ${token === undefined ? 'anonymous' : 'authenticated'}`
      const ws = await connect(t, h, { path, token })
      for (const [name, raw] of tooDeep) {
        ws.sendRaw(raw)
        t.same(await ws.next(() => true), TOO_DEEP, `${who}: ${name}`)
      }
      // The same socket goes on answering.
      const info = await ws.request({ action: 'server/info' })
      t.equal(info.status, 'success', `${who}: the socket still answers`)
      await ws.close()
    }
  }

  t.equal((await bystander.request({ action: 'server/info' })).status, 'success', 'a socket opened before still works')
  t.equal((await h.request('GET', '/info', { token: null })).status, 200, 'the server answers /info')
  t.same(await storedState(h, DEVICE), before, 'nothing stored changed')
})

t.test('only a string or number requestId is echoed, and only a string action', async (t) => {
  const h = await createTestApp(t)
  for (const token of [undefined, h.adminToken]) {
    const ws = await connect(t, h, { token })
    // Nested within the limit: parsed, answered, echoed as null.
    ws.sendRaw(`{"action":"server/info","requestId":${nested(300)}}`)
    const info = await ws.next((f) => f.action === 'server/info')
    t.equal(info.status, 'success')
    t.equal(info.requestId, null)

    ws.sendRaw(`{"action":${nestedObject(300)},"requestId":${nestedObject(300)}}`)
    t.same(await ws.next(() => true), {
      action: null, requestId: null, code: 400, status: 'error', error: '\'action\' field could not be parsed to known endpoint'
    })

    ws.sendRaw(`{"action":"no/such","requestId":{"x":${nested(300)}}}`)
    t.same(await ws.next(() => true), { action: 'no/such', requestId: null, code: 400, status: 'error', error: 'Illegal argument: no/such' })

    for (const requestId of [true, false, { a: 1 }, [1]]) {
      ws.sendRaw(JSON.stringify({ action: 'server/info', requestId }))
      const reply = await ws.next((f) => f.action === 'server/info')
      t.equal(reply.requestId, null, JSON.stringify(requestId))
    }
    for (const requestId of ['s', 7, 0, -1.5]) {
      ws.sendRaw(JSON.stringify({ action: 'server/info', requestId }))
      const reply = await ws.next((f) => f.action === 'server/info')
      t.equal(reply.requestId, requestId, JSON.stringify(requestId))
    }
    await ws.close()
  }
})

t.test('a nested frame above the frame limit closes only that socket', async (t) => {
  const h = await createTestApp(t, { webSocket: { maxPayload: 64 * 1024 } })
  const bystander = await connect(t, h)
  const ws = await connect(t, h)
  ws.sendRaw(deepFrame('{"action":"server/info","requestId":', '}', 64 * 1024 + 1))
  t.equal(await ws.closed, 1009)
  t.equal((await bystander.request({ action: 'server/info' })).status, 'success')
})
