import t from 'tap'
import { createDeviceHub } from '../../lib/core/devicehub.js'
import { createMemoryDoorbell } from '../../lib/core/realtime/memory-doorbell.js'
import { buildServer } from '../../lib/http/build-server.js'
import { ADMIN_PASSWORD, createTestApp } from '../fixtures/app.js'
import { openTestStore } from '../fixtures/store.js'

t.test('/ answers links, not a 404', async (t) => {
  const h = await createTestApp(t)
  const res = await h.app.inject({ method: 'GET', url: '/' })
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    name: 'devicehub', api: '/api/rest', openapi: '/api/rest/openapi.json', docs: '/api/rest/docs',
    health: '/api/rest/health', ready: '/api/rest/health/ready'
  })
  t.notOk('metrics' in res.json(), 'no metrics link while metrics are off')
  t.equal((await h.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404, 'metrics are off by default')
})

t.test('liveness and readiness need no token and say ok', async (t) => {
  const h = await createTestApp(t)
  for (const path of ['/health', '/health/live']) {
    const res = await h.request('GET', path, { token: null })
    t.equal(res.status, 200, path)
    t.same(res.body, { status: 'ok' })
    t.equal(res.headers['cache-control'], 'no-store')
  }
  const ready = await h.request('GET', '/health/ready', { token: null })
  t.equal(ready.status, 200)
  t.match(ready.body, { status: 'ok', checks: { store: { status: 'ok' }, doorbell: { status: 'ok' }, shutdown: { status: 'ok' } } })
  t.match(await h.hub.health(), { status: 'ok', checks: { store: { status: 'ok' }, doorbell: { status: 'ok' } } }, 'the embedding API reports the same')
  t.equal((await h.request('GET', '/health/ready', { token: 'not-a-token' })).status, 401, 'a bad token is still refused')
})

t.test('readiness answers 503 when the store fails, the doorbell is down, or the hub is closing', async (t) => {
  const store = await openTestStore(t)
  const bus = createMemoryDoorbell()
  const hub = await createDeviceHub({ store, bus, admin: { password: ADMIN_PASSWORD } })
  const app = await buildServer({ hub, closeHub: false })
  t.teardown(async () => { await app.close(); await hub.close() })

  // A bus with a connection of its own says when it drops and comes back.
  await bus.publish({ kind: 'connection', up: false })
  const down = await app.inject({ method: 'GET', url: '/api/rest/health/ready' })
  t.equal(down.statusCode, 503)
  t.match(down.json(), { status: 'fail', checks: { doorbell: { status: 'fail', message: /doorbell/ }, store: { status: 'ok' } } })
  await bus.publish({ kind: 'connection', up: true })
  t.equal((await app.inject({ method: 'GET', url: '/api/rest/health/ready' })).statusCode, 200, 'ready again once it is back')

  const get = store.secrets.get
  store.secrets.get = async () => { throw new Error('database is locked: secret detail') }
  const failing = await app.inject({ method: 'GET', url: '/api/rest/health/ready' })
  store.secrets.get = get
  t.equal(failing.statusCode, 503)
  t.match(failing.json(), { status: 'fail', checks: { store: { status: 'fail', message: 'the store did not answer' } } })
  t.notMatch(failing.body, 'secret detail', 'driver messages are not passed through')
  t.equal((await app.inject({ method: 'GET', url: '/api/rest/health' })).statusCode, 200, 'liveness is independent of the store')

  hub.releaseWaiters()
  const closing = await app.inject({ method: 'GET', url: '/api/rest/health/ready' })
  t.equal(closing.statusCode, 503, 'a closing instance drains')
  t.match(closing.json(), { checks: { shutdown: { status: 'fail' } } })
})

t.test('Swagger UI at {base}/docs, describing the API', async (t) => {
  const h = await createTestApp(t)
  // The printed URL has no trailing slash: a redirect to the page, whose assets are relative to it.
  const printed = await h.app.inject({ method: 'GET', url: '/api/rest/docs' })
  t.equal(printed.statusCode, 302)
  t.equal(printed.headers.location, 'docs/')
  const page = await h.app.inject({ method: 'GET', url: '/api/rest/docs/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /swagger/i)
  const spec = await h.app.inject({ method: 'GET', url: '/api/rest/docs/json' })
  t.equal(spec.statusCode, 200)
  t.ok(spec.json().paths['/device/{deviceId}/command'], 'the document lists the routes')
  t.ok(spec.json().paths['/health/ready'], 'and the probes')
  const off = await buildServer({ hub: h.hub, closeHub: false, docs: false })
  t.teardown(() => off.close())
  t.equal((await off.inject({ method: 'GET', url: '/api/rest/docs' })).statusCode, 404, 'docs: false turns it off')
})

t.test('GET /metrics: requests by route and status, polls, messages, store latency, retention, process', async (t) => {
  const store = await openTestStore(t)
  const hub = await createDeviceHub({ store, admin: { password: ADMIN_PASSWORD } })
  const app = await buildServer({ hub, metrics: { webSocket: { sessions: () => 3, subscriptions: () => 7 } } })
  t.teardown(() => app.close())
  const { accessToken } = await hub.tokens.login('dhadmin', ADMIN_PASSWORD)
  const auth = { authorization: `Bearer ${accessToken}` }
  t.equal((await app.inject({ method: 'PUT', url: '/api/rest/device/m-1', headers: auth, payload: { name: 'm', networkId: 1 } })).statusCode, 204)
  t.equal((await app.inject({ method: 'POST', url: '/api/rest/device/m-1/notification', headers: auth, payload: { notification: 'temp' } })).statusCode, 201)
  t.equal((await app.inject({ method: 'POST', url: '/api/rest/device/m-1/command', headers: auth, payload: { command: 'go' } })).statusCode, 201)
  t.equal((await app.inject({ method: 'GET', url: '/api/rest/device/nope', headers: auth })).statusCode, 404)
  const parked = app.inject({ method: 'GET', url: '/api/rest/device/m-1/notification/poll?waitTimeout=30', headers: auth })
  for (let i = 0; i < 200 && hub.stats.parkedPolls === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))

  const scrape = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(scrape.statusCode, 200)
  t.match(scrape.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const text = scrape.body
  t.match(text, /devicehub_http_requests_total\{method="POST",route="\/api\/rest\/device\/:deviceId\/notification",status="201"\} 1/)
  t.match(text, /devicehub_http_requests_total\{method="GET",route="\/api\/rest\/device\/:id",status="404"\} 1/, 'route patterns, not ids')
  t.notMatch(text, /route="[^"]*m-1/, 'no raw URLs in labels')
  t.match(text, /devicehub_http_request_duration_seconds_bucket\{le="0\.005",method="PUT"/)
  t.match(text, /devicehub_long_polls_parked 1/)
  t.match(text, /devicehub_messages_written_total\{kind="notification"\} 2/, "the $device-add notification and the posted one")
  t.match(text, /devicehub_messages_written_total\{kind="command"\} 1/)
  t.match(text, /devicehub_websocket_sessions 3/)
  t.match(text, /devicehub_websocket_subscriptions 7/)
  t.match(text, /devicehub_store_query_duration_seconds_count\{operation="select"\} [1-9]/)
  t.match(text, /devicehub_store_query_duration_seconds_count\{operation="insert"\} [1-9]/)
  t.match(text, /devicehub_retention_pruned_rows_total 0/)
  t.match(text, /devicehub_doorbell_events_waiting 0/, 'nothing held back (zero without the PostgreSQL doorbell)')
  t.match(text, /devicehub_doorbell_resyncs_total 0/)
  t.match(text, /process_cpu_user_seconds_total/)
  t.match(text, /nodejs_eventloop_lag_seconds/)

  hub.releaseWaiters()
  t.equal((await parked).statusCode, 200)
  const after = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(after, /devicehub_long_polls_parked 0/)
  t.match((await app.inject({ method: 'GET', url: '/' })).json(), { metrics: '/metrics' })
})

t.test('GET /metrics counts the real WebSocket sessions and subscriptions of the server', async (t) => {
  const { WebSocket } = await import('ws')
  const { startServer } = await import('../../lib/start-server.js')
  const server = await startServer({ port: 0, metrics: true, admin: { password: ADMIN_PASSWORD } })
  t.teardown(() => server.close())
  const origin = new URL(server.url).origin
  const scrape = async (): Promise<string> => (await fetch(`${origin}/metrics`)).text()
  t.match(await scrape(), /devicehub_websocket_sessions 0\n[\s\S]*devicehub_websocket_subscriptions 0/)

  const { accessToken } = await server.adminTokens()
  const socket = new WebSocket(`${origin.replace('http', 'ws')}/api/websocket`, { headers: { authorization: `Bearer ${accessToken}` } })
  await new Promise((resolve, reject) => { socket.once('open', resolve).once('error', reject) })
  const reply = new Promise<{ status: string }>((resolve) => socket.once('message', (data) => resolve(JSON.parse(data.toString()))))
  socket.send(JSON.stringify({ action: 'notification/subscribe', requestId: 1 }))
  t.equal((await reply).status, 'success')
  const text = await scrape()
  t.match(text, /devicehub_websocket_sessions 1\n/)
  t.match(text, /devicehub_websocket_subscriptions 1\n/)
  socket.close()
  for (let i = 0; i < 200 && !/devicehub_websocket_sessions 0\n/.test(await scrape()); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.match(await scrape(), /devicehub_websocket_sessions 0\n/, 'a closed socket is no longer counted')
})
