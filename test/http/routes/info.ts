import t from 'tap'
import { createTestApp } from '../../fixtures/app.js'

t.test('GET /info is public and reports versions, time and the WebSocket URL', async (t) => {
  const h = await createTestApp(t)
  const res = await h.request('GET', '/info', { token: null, headers: { host: 'example.org:8080' } })
  t.equal(res.status, 200)
  t.same(Object.keys(res.body).sort(), ['apiVersion', 'serverTimestamp', 'serverVersion', 'webSocketServerUrl'])
  t.equal(res.body.apiVersion, '4.1.0')
  t.match(res.body.serverTimestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/)
  t.equal(res.body.webSocketServerUrl, 'ws://example.org:8080/api/websocket')
  const https = await h.request('GET', '/info', { token: null, headers: { host: 'example.org', 'x-forwarded-proto': 'https' } })
  t.equal(https.body.webSocketServerUrl, 'wss://example.org/api/websocket')
})
