/**
 * Two real `devicehub serve` processes over one PostgreSQL database: long polls parked on one
 * instance are woken by writes on the other (LISTEN/NOTIFY), with the exact views.
 */
import type { Test as Tap } from 'tap'
import { runCli } from '../fixtures/cli.js'
import type { CliProcess } from '../fixtures/cli.js'
import { call, sleep } from '../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/
const SECRET = 'two-instances-shared-jwt-secret'
const PASSWORD = 'two-instances-admin-password'
/** A doorbell crosses instances in milliseconds; anything near the 30 s wait means it was lost. */
const WAKE_LIMIT_MS = 3000


async function serve (t: Tap, db: string): Promise<{ cli: CliProcess, url: string }> {
  const cli = runCli(['serve', '--db', db, '--port', '0', '--jwt-secret', SECRET, '--admin-password', PASSWORD, '--log-level', 'warn'])
  t.teardown(async () => {
    if (cli.child.exitCode === null) {
      cli.child.kill('SIGTERM')
      const timer = setTimeout(() => cli.child.kill('SIGKILL'), 5000)
      await cli.exited
      clearTimeout(timer)
    }
  })
  const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/api\/rest)/, 60_000)
  return { cli, url: url! }
}

async function login (url: string): Promise<string> {
  const res = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password: PASSWORD }) })
  if (res.status !== 201) throw new Error(`login failed: ${res.status}`)
  return ((await res.json()) as { accessToken: string }).accessToken
}

/** Starts a request and reports when it settled, so a test can tell it waited for the write. */
function timed<T> (promise: Promise<T>): { result: Promise<T>, settledAt: () => number | undefined } {
  let at: number | undefined
  const result = promise.finally(() => { at = Date.now() })
  return { result, settledAt: () => at }
}

postgresTest('two instances over one database wake each other\'s long polls', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  // Started together: both migrate and bootstrap the same empty database at once.
  const [a, b] = await Promise.all([serve(t, db), serve(t, db)])
  t.not(a.url, b.url, 'two listeners on different ports')
  const tokenA = await login(a.url)
  const tokenB = await login(b.url)
  t.equal((await call(`${b.url}/info`, tokenA)).status, 200, 'a token issued by A is accepted by B (shared secret)')

  const network = await call(`${a.url}/network`, tokenA, { method: 'POST', body: { name: 'two-instances', description: null } })
  t.equal(network.status, 201)
  const networkId = network.body.id as number
  const device = 'two-instances-device'
  t.equal((await call(`${b.url}/device/${device}`, tokenB, { method: 'PUT', body: { name: 'Two instances', networkId } })).status, 204)
  const registered = await call(`${a.url}/device/${device}`, tokenA)
  t.equal(registered.status, 200, 'the device registered on B is visible on A')
  const deviceTypeId = registered.body.deviceTypeId as number | null

  // 1. The device long-polls on A; the client posts the command on B.
  const devicePoll = timed(call(`${a.url}/device/${device}/command/poll?waitTimeout=30`, tokenA))
  await sleep(500)
  t.equal(devicePoll.settledAt(), undefined, 'the device poll is parked')
  const postedAt = Date.now()
  const posted = await call(`${b.url}/device/${device}/command`, tokenB, { method: 'POST', body: { command: 'light-on', parameters: { level: 7, room: 'hall' }, lifetime: 600 } })
  t.equal(posted.status, 201)
  t.same(Object.keys(posted.body).sort(), ['id', 'lastUpdated', 'timestamp', 'userId'])
  t.match(posted.body.timestamp, TS)
  const received = await devicePoll.result
  const commandLatency = devicePoll.settledAt()! - postedAt
  t.ok(commandLatency < WAKE_LIMIT_MS, `the device on A got B's command in ${commandLatency} ms`)
  t.equal(received.status, 200)
  const commandId = posted.body.id as number
  t.same(received.body, [{
    id: commandId,
    command: 'light-on',
    timestamp: posted.body.timestamp,
    lastUpdated: posted.body.timestamp,
    userId: 1,
    deviceId: device,
    networkId,
    deviceTypeId,
    parameters: { level: 7, room: 'hall' },
    lifetime: 600,
    status: null,
    result: null
  }])

  // 2. The client waits for the update on B; the device updates on A.
  const clientWait = timed(call(`${b.url}/device/${device}/command/${commandId}/poll?waitTimeout=30`, tokenB))
  await sleep(500)
  t.equal(clientWait.settledAt(), undefined, 'the client wait is parked')
  const updatedAt = Date.now()
  const update = await call(`${a.url}/device/${device}/command/${commandId}`, tokenA, { method: 'PUT', body: { status: 'Done', result: { ok: true, brightness: 0.7 } } })
  t.equal(update.status, 204)
  const done = await clientWait.result
  const updateLatency = clientWait.settledAt()! - updatedAt
  t.ok(updateLatency < WAKE_LIMIT_MS, `the client on B got A's update in ${updateLatency} ms`)
  t.equal(done.status, 200)
  t.match(done.body.lastUpdated, TS)
  t.same(done.body, {
    id: commandId,
    command: 'light-on',
    timestamp: posted.body.timestamp,
    lastUpdated: done.body.lastUpdated,
    userId: 1,
    deviceId: device,
    networkId,
    deviceTypeId,
    parameters: { level: 7, room: 'hall' },
    lifetime: 600,
    status: 'Done',
    result: { ok: true, brightness: 0.7 }
  })
  t.ok(done.body.lastUpdated >= posted.body.timestamp, 'lastUpdated moved on')
  const onA = await call(`${a.url}/device/${device}/command/${commandId}`, tokenA)
  t.same(onA.body, done.body, 'both instances read the same stored command')

  // 3. Notifications: a client polls on B, the device posts on A.
  const clientPoll = timed(call(`${b.url}/device/${device}/notification/poll?waitTimeout=30`, tokenB))
  await sleep(500)
  t.equal(clientPoll.settledAt(), undefined, 'the notification poll is parked')
  const sentAt = Date.now()
  const sent = await call(`${a.url}/device/${device}/notification`, tokenA, { method: 'POST', body: { notification: 'temperature', parameters: { celsius: 21.5 } } })
  t.equal(sent.status, 201)
  t.same(Object.keys(sent.body).sort(), ['id', 'timestamp'])
  const heard = await clientPoll.result
  const notificationLatency = clientPoll.settledAt()! - sentAt
  t.ok(notificationLatency < WAKE_LIMIT_MS, `the client on B got A's notification in ${notificationLatency} ms`)
  t.equal(heard.status, 200)
  t.same(heard.body, [{
    id: sent.body.id,
    notification: 'temperature',
    deviceId: device,
    networkId,
    deviceTypeId,
    timestamp: sent.body.timestamp,
    parameters: { celsius: 21.5 }
  }])

  // Both instances close cleanly (their LISTEN connections and pools go with them).
  a.cli.child.kill('SIGTERM')
  b.cli.child.kill('SIGTERM')
  t.same(await Promise.all([a.cli.exited, b.cli.exited]), [0, 0], 'both exit cleanly on SIGTERM')
})
