/**
 * No anonymous lockout (issue #22, point 3), over real sockets: the app listens, clients are
 * `fetch` and `ws`. Distinct client addresses come from `X-Forwarded-For` with `trustProxy`;
 * without it the header changes nothing. The hub runs on a fake clock, so long stretches of
 * guessing take no real time.
 */
import t from 'tap'
import { WebSocket } from 'ws'
import { createDeviceHub } from '../../lib/core/devicehub.js'
import { buildServer } from '../../lib/http/build-server.js'
import { ADMIN_PASSWORD, JWT_SECRET } from '../fixtures/app.js'
import { openTestStore } from '../fixtures/store.js'
import type { TestContext } from '../fixtures/store.js'

const HELD = /^Too many failed login attempts\. Retry in (\d+) s$/

interface Rig {
  origin: string
  /** Log lines (JSON) at warn and above. */
  logs: Array<Record<string, unknown>>
  advance(ms: number): void
  login(login: string, password: string, from?: string): Promise<{ status: number, body: Record<string, unknown>, retryAfter: string | null }>
  metrics(): Promise<string>
  hub: Awaited<ReturnType<typeof createDeviceHub>>
}

async function startRig (t: TestContext, trustProxy: boolean): Promise<Rig> {
  let now = Date.UTC(2026, 10, 1)
  const store = await openTestStore(t)
  const hub = await createDeviceHub({ store, jwtSecret: JWT_SECRET, clock: { now: () => now }, admin: { password: ADMIN_PASSWORD } })
  const logs: Array<Record<string, unknown>> = []
  const stream = { write: (line: string) => { logs.push(JSON.parse(line) as Record<string, unknown>) } }
  const app = await buildServer({ hub, closeHub: false, trustProxy, metrics: { processMetrics: false }, logger: { level: 'warn', stream } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    await hub.close()
  })
  const address = app.server.address()
  const origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
  return {
    origin,
    logs,
    hub,
    advance: (ms) => { now += ms },
    async login (login, password, from) {
      const res = await fetch(`${origin}/api/rest/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(from === undefined ? {} : { 'x-forwarded-for': from }) },
        body: JSON.stringify({ login, password })
      })
      return { status: res.status, body: await res.json() as Record<string, unknown>, retryAfter: res.headers.get('retry-after') }
    },
    metrics: async () => (await fetch(`${origin}/metrics`)).text()
  }
}

t.test('an attacker hammering dhadmin for half a day never delays the right password from another address', async (t) => {
  const rig = await startRig(t, true)
  const statuses: number[] = []
  let simulated = 0
  while (simulated < 12 * 3600_000) {
    const res = await rig.login('dhadmin', `guess-${statuses.length}`, '203.0.113.9')
    statuses.push(res.status)
    if (res.status === 429) {
      const seconds = HELD.exec(String(res.body.message))?.[1]
      t.equal(res.retryAfter, seconds, 'Retry-After says what the message says')
      rig.advance(Number(seconds) * 1000)
      simulated += Number(seconds) * 1000
    }
    if (statuses.length % 10 === 0) {
      const owner = await rig.login('dhadmin', ADMIN_PASSWORD, '192.0.2.1')
      t.equal(owner.status, 201, `the admin logs in at once after ${statuses.length} guesses`)
    }
  }
  // The loop ended by waiting out a hold: the next guess goes ahead and starts another.
  statuses.push((await rig.login('dhadmin', 'one-more', '203.0.113.9')).status)
  t.equal(statuses.at(-1), 401)
  t.same(statuses.slice(0, 6), [401, 401, 401, 401, 401, 429], 'five guesses, then held')
  const guesses = statuses.filter((s) => s === 401).length
  t.ok(guesses <= 5 + 12 * 4 + 15, `${guesses} guesses in 12 hours`)
  const held = await rig.login('dhadmin', ADMIN_PASSWORD, '203.0.113.9')
  t.equal(held.status, 429, 'the guessing address itself waits, even with the right password')
  t.match(held.body, { error: 429, message: HELD })
  t.equal((await rig.login('dhadmin', ADMIN_PASSWORD, '192.0.2.1')).status, 201, 'and the admin, once more')
  const metrics = await rig.metrics()
  t.match(metrics, `devicehub_login_failures_total{reason="invalid"} ${guesses}`)
  t.match(metrics, `devicehub_login_failures_total{reason="throttled"} ${statuses.length - guesses + 1}`)
  t.match(metrics, 'devicehub_login_guessing_alerts_total 0', 'one address is no distributed guessing')
})

t.test('one address spraying logins is held back after a handful, for every login it tries', async (t) => {
  const rig = await startRig(t, true)
  const statuses = []
  for (let i = 0; i < 12; i++) statuses.push((await rig.login(`nobody-${i}`, 'x', '203.0.113.9')).status)
  t.same(statuses, [...Array(10).fill(401), 429, 429], 'ten failures across logins, then held')
  t.equal((await rig.login('dhadmin', ADMIN_PASSWORD, '203.0.113.9')).status, 429, 'held for a login it never tried too')
  t.equal((await rig.login('dhadmin', ADMIN_PASSWORD, '203.0.113.10')).status, 201, 'a neighbour is not')
})

t.test('parallel guesses from one address: only the free five are checked', async (t) => {
  const rig = await startRig(t, true)
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => rig.login('dhadmin', `parallel-${i}`, '203.0.113.9')))
  const statuses = results.map((r) => r.status).sort()
  t.same(statuses, [...Array(5).fill(401), ...Array(15).fill(429)])
})

t.test('many addresses failing one login: a warning line and the metrics, never a hold on the owner', async (t) => {
  const rig = await startRig(t, true)
  for (let i = 0; i < 12; i++) {
    t.equal((await rig.login('dhadmin', `secret-guess-${i}`, `198.51.100.${i + 1}`)).status, 401)
  }
  t.equal((await rig.login('dhadmin', ADMIN_PASSWORD, '192.0.2.1')).status, 201, 'the owner goes ahead')
  const warnings = rig.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('distributed login guessing'))
  t.equal(warnings.length, 1, 'one warning per login and window')
  t.match(warnings[0], { level: 40, login: 'dhadmin', addresses: 10, failures: 10, windowMinutes: 15 })
  t.notMatch(JSON.stringify(rig.logs), /secret-guess|admin-password/, 'no password in any log line')
  const metrics = await rig.metrics()
  t.match(metrics, 'devicehub_login_guessing_alerts_total 1')
  t.match(metrics, 'devicehub_logins_under_guessing 1')
  t.match(metrics, 'devicehub_login_failures_total{reason="invalid"} 12')
  rig.advance(15 * 60_000 + 1)
  t.match(await rig.metrics(), 'devicehub_logins_under_guessing 0', 'the gauge falls after the window')
})

t.test('without trustProxy, X-Forwarded-For changes nothing: every attempt is the socket\'s address', async (t) => {
  const rig = await startRig(t, false)
  const statuses = []
  for (let i = 0; i < 6; i++) statuses.push((await rig.login('dhadmin', `guess-${i}`, `198.51.100.${i + 1}`)).status)
  t.same(statuses, [401, 401, 401, 401, 401, 429], 'one address, whatever the header says')
  t.equal((await rig.login('dhadmin', ADMIN_PASSWORD, '192.0.2.1')).status, 429, 'a forged header does not escape the hold')
  t.match(await rig.metrics(), 'devicehub_login_guessing_alerts_total 0', 'and does not fake distributed guessing')
})

interface Socket {
  request(frame: Record<string, unknown>): Promise<Record<string, unknown>>
  raw: string[]
}

async function openSocket (t: TestContext, origin: string, from: string): Promise<Socket> {
  const socket = new WebSocket(`${origin.replace('http', 'ws')}/api/websocket`, { headers: { 'x-forwarded-for': from } })
  t.teardown(() => socket.terminate())
  const raw: string[] = []
  const waiting = new Map<string, (frame: Record<string, unknown>) => void>()
  socket.on('message', (data) => {
    raw.push(data.toString())
    const frame = JSON.parse(data.toString()) as Record<string, unknown>
    waiting.get(String(frame.requestId))?.(frame)
  })
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  let id = 0
  return {
    raw,
    request: async (frame) => new Promise((resolve) => {
      const requestId = `r${++id}`
      waiting.set(requestId, resolve)
      socket.send(JSON.stringify({ ...frame, requestId }))
    })
  }
}

t.test('the WebSocket token action is throttled by the connection\'s address, with the usual error frame', async (t) => {
  const rig = await startRig(t, true)
  const attacker = await openSocket(t, rig.origin, '203.0.113.9')
  const replies = []
  for (let i = 0; i < 7; i++) replies.push(await attacker.request({ action: 'token', login: 'dhadmin', password: `guess-${i}` }))
  t.same(replies.slice(0, 5).map((r) => [r.code, r.error]), Array(5).fill([401, 'Invalid credentials']))
  t.same(Object.keys(replies[5]!), ['action', 'requestId', 'code', 'status', 'error'], 'the error frame of every action')
  t.match(replies[5], { action: 'token', requestId: 'r6', code: 429, status: 'error', error: HELD })
  t.equal(attacker.raw[5], JSON.stringify(replies[5]), 'exactly that frame')
  t.equal((await rig.login('dhadmin', ADMIN_PASSWORD, '203.0.113.9')).status, 429, 'REST from that address is held too: one throttle')
  const owner = await openSocket(t, rig.origin, '192.0.2.1')
  const ok = await owner.request({ action: 'token', login: 'dhadmin', password: ADMIN_PASSWORD })
  t.match(ok, { action: 'token', status: 'success', accessToken: String, refreshToken: String }, 'another address logs in at once')
  t.match(await rig.metrics(), 'devicehub_login_failures_total{reason="throttled"} 3')
})

t.test('user.login.maxAttempts counts only failures that get past the throttle', async (t) => {
  const rig = await startRig(t, true)
  await rig.hub.store.configuration.put('user.login.maxAttempts', '8')
  const statuses = []
  for (let i = 0; i < 20; i++) statuses.push((await rig.login('dhadmin', `guess-${i}`, '203.0.113.9')).status)
  t.equal(statuses.filter((s) => s === 401).length, 5, 'five got past the throttle')
  const admin = await rig.hub.store.users.findById(1)
  t.same([admin!.loginAttempts, admin!.status], [5, 0], 'five counted; still active')
  t.equal((await rig.login('dhadmin', ADMIN_PASSWORD, '192.0.2.1')).status, 201)
  t.equal((await rig.hub.store.users.findById(1))!.loginAttempts, 0, 'a login starts the count over')
})
