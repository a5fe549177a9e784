/**
 * Issue #22, point 6: nothing is answered before the hub is initialised. The server listens
 * before the first-start data exists (as startServer does); the bootstrap's transaction is held
 * until the test lets it go, so requests really arrive before the admin exists. Real sockets.
 */
import Fastify from 'fastify'
import t from 'tap'
import type { AddressInfo } from 'node:net'
import { WebSocket } from 'ws'
import { createDeviceHub } from '../../lib/core/devicehub.js'
import type { DeviceHub } from '../../lib/core/devicehub.js'
import type { Store } from '../../lib/core/ports.js'
import { buildServer } from '../../lib/http/build-server.js'
import { devicehubPlugin } from '../../lib/http/plugin.js'
import { STARTING_MESSAGE } from '../../lib/http/readiness-gate.js'
import { startServer } from '../../lib/start-server.js'
import { ADMIN_PASSWORD, JWT_SECRET } from '../fixtures/app.js'
import { eventually } from '../fixtures/messaging.js'
import type { TestContext } from '../fixtures/store.js'
import { openTestStore } from '../fixtures/store.js'

interface Held {
  hub: DeviceHub
  origin: string
  /** Lets the bootstrap's transaction run. */
  release(): void
  /** Requests (and upgrades) the server has received so far. */
  arrived(): number
  /** For each response sent: was the hub initialised at that moment? (health probes left out) */
  answeredInitialised: boolean[]
}

/** A listening server whose hub's first-start bootstrap waits for `release()`. */
async function heldServer (t: TestContext, startupWaitMs?: number): Promise<Held> {
  const real = await openTestStore(t)
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  const store: Store = Object.assign(Object.create(real) as Store, {
    transaction: async <T>(work: (tx: Store) => Promise<T>): Promise<T> => {
      await gate
      return real.transaction(work)
    }
  })
  const hub = await createDeviceHub({ store, jwtSecret: JWT_SECRET, admin: { password: ADMIN_PASSWORD }, deferBootstrap: true })
  const app = await buildServer({ hub, closeHub: false, startupWaitMs })
  t.teardown(async () => {
    release()
    await app.close()
    await hub.close()
  })
  let arrived = 0
  const answeredInitialised: boolean[] = []
  app.server.on('request', (request, response) => {
    arrived++
    if (request.url?.includes('/health') !== true) response.on('finish', () => answeredInitialised.push(hub.initialised))
  })
  app.server.on('upgrade', () => { arrived++ })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return { hub, origin: `127.0.0.1:${port}`, release, arrived: () => arrived, answeredInitialised }
}

async function login (origin: string, password = ADMIN_PASSWORD): Promise<{ status: number, body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(`http://${origin}/api/rest/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password })
  })
  return { status: res.status, body: await res.json() }
}

/** Opens a WebSocket; resolves 'open', or the HTTP status that refused the upgrade. */
function upgrade (url: string): Promise<{ socket: WebSocket, outcome: 'open' | number }> {
  const socket = new WebSocket(url)
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket, outcome: 'open' }))
    socket.once('unexpected-response', (_request, response) => resolve({ socket, outcome: response.statusCode ?? 0 }))
    socket.once('error', reject)
  })
}

t.test('a request that arrives before initialisation waits for it: the right password logs in, never 401', async (t) => {
  const s = await heldServer(t)
  const initialising = s.hub.initialise()
  t.equal(s.hub.initialised, false)

  const live = await fetch(`http://${s.origin}/api/rest/health/live`)
  t.same([live.status, await live.json()], [200, { status: 'ok' }], 'liveness answers at once')
  const ready = await fetch(`http://${s.origin}/api/rest/health/ready`)
  t.equal(ready.status, 503, 'readiness says not ready')
  t.match(await ready.json(), { status: 'fail', checks: { startup: { status: 'fail', message: 'the first-start initialisation is not done yet' }, store: { status: 'ok' } } })
  t.match(await s.hub.health(), { status: 'fail', checks: { startup: { status: 'fail' } } }, 'the embedding API reports the same')

  const before = s.arrived()
  const early = login(s.origin)
  const info = fetch(`http://${s.origin}/api/rest/info`)
  const socket = upgrade(`ws://${s.origin}/api/websocket`)
  const proxy = upgrade(`ws://${s.origin}/api/plugin/proxy`)
  await eventually(() => s.arrived() === before + 4)
  t.equal(s.hub.initialised, false, 'all four arrived while the admin does not exist yet')

  s.release()
  await initialising
  const res = await early
  t.equal(res.status, 201, 'the early login waited and succeeded')
  t.type(res.body.accessToken, 'string')
  t.equal((await info).status, 200)
  const ws = await socket
  t.equal(ws.outcome, 'open', 'the WebSocket upgrade waited, then opened')
  ws.socket.terminate()
  const px = await proxy
  t.equal(px.outcome, 'open', 'the plugin proxy upgrade waited, then opened')
  px.socket.terminate()
  t.same(s.answeredInitialised, [true, true], 'no HTTP answer left before the initialisation was done')
  t.equal((await fetch(`http://${s.origin}/api/rest/health/ready`)).status, 200, 'ready now')
  t.equal((await login(s.origin, 'wrong-password-1')).status, 401, 'a wrong password is still refused')
})

t.test('a request that waits longer than startupWaitMs gets 503 with Retry-After, never a wrong answer', async (t) => {
  const s = await heldServer(t, 50)
  const initialising = s.hub.initialise()
  const res = await fetch(`http://${s.origin}/api/rest/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password: ADMIN_PASSWORD })
  })
  t.same([res.status, res.headers.get('retry-after'), await res.json()], [503, '1', { error: 503, message: STARTING_MESSAGE }])
  const info = await fetch(`http://${s.origin}/api/rest/info`)
  t.same([info.status, info.headers.get('retry-after')], [503, '1'])
  t.equal((await upgrade(`ws://${s.origin}/api/websocket`)).outcome, 503, 'a WebSocket upgrade is refused with 503')
  t.equal((await upgrade(`ws://${s.origin}/websocket`)).outcome, 503, 'the /websocket alias too')
  t.equal((await upgrade(`ws://${s.origin}/api/rest/websocket`)).outcome, 503, 'and the one under the REST base')
  t.equal((await upgrade(`ws://${s.origin}/api/plugin/proxy`)).outcome, 503, 'the plugin proxy too')
  s.release()
  await initialising
  t.equal((await login(s.origin)).status, 201, 'once initialised, the same login succeeds')
})

t.test('closing the hub before initialisation lets waiting requests go with 503', async (t) => {
  const s = await heldServer(t)
  const before = s.arrived()
  const waiting = fetch(`http://${s.origin}/api/rest/info`)
  await eventually(() => s.arrived() === before + 1)
  await s.hub.close()
  const res = await waiting
  t.same([res.status, await res.json()], [503, { error: 503, message: STARTING_MESSAGE }])
})

t.test('a failed initialisation answers 503 at once, not after the wait', async (t) => {
  const real = await openTestStore(t)
  const store: Store = Object.assign(Object.create(real) as Store, {
    transaction: async () => { throw new Error('disk full') }
  })
  const hub = await createDeviceHub({ store, jwtSecret: JWT_SECRET, admin: { password: ADMIN_PASSWORD }, deferBootstrap: true })
  // A wait far longer than the test's own timeout: only the failure can end it.
  const app = await buildServer({ hub, closeHub: false, startupWaitMs: 3_600_000 })
  t.teardown(async () => { await app.close(); await hub.close() })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const waiting = fetch(`http://127.0.0.1:${port}/api/rest/info`)
  await t.rejects(hub.initialise(), /disk full/)
  t.equal((await waiting).status, 503)
})

t.test('startServer: a login sent the moment it listens gets 201; readiness reports startup ok', async (t) => {
  let early: Promise<{ status: number }> | undefined
  const server = await startServer({
    admin: { password: ADMIN_PASSWORD },
    configure (app) {
      // Sent as soon as the server listens, before startServer() has called hub.initialise().
      app.addHook('onListen', async () => {
        const { port } = app.server.address() as AddressInfo
        early = login(`127.0.0.1:${port}`)
      })
    }
  })
  t.teardown(() => server.close())
  t.equal((await early)?.status, 201, 'the right password logs in')
  const ready = await fetch(`${server.url}/health/ready`)
  t.match([ready.status, await ready.json()], [200, { status: 'ok', checks: { startup: { status: 'ok' } } }])
})

t.test('devicehubPlugin in a host app: its routes wait for the hub, the host\'s own routes do not', async (t) => {
  const hub = await createDeviceHub({ store: await openTestStore(t), jwtSecret: JWT_SECRET, admin: { password: ADMIN_PASSWORD }, deferBootstrap: true })
  const app = Fastify()
  app.get('/host', async () => ({ host: true }))
  await app.register(devicehubPlugin, { hub, prefix: '/iot/api/rest', startupWaitMs: 50 })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await app.close(); await hub.close() })
  t.same(await (await fetch(`${address}/host`)).json(), { host: true }, 'host routes are not held')
  const info = await fetch(`${address}/iot/api/rest/info`)
  t.same([info.status, info.headers.get('retry-after'), await info.json()], [503, '1', { error: 503, message: STARTING_MESSAGE }])
  t.equal((await upgrade(`${address.replace(/^http/, 'ws')}/iot/api/rest/websocket`)).outcome, 503)
  t.equal((await upgrade(`${address.replace(/^http/, 'ws')}/iot/api/plugin/proxy`)).outcome, 503)
  await hub.initialise()
  const res = await fetch(`${address}/iot/api/rest/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password: ADMIN_PASSWORD })
  })
  t.equal(res.status, 201, 'served once initialised')
})
