/**
 * Presence across two real `devicehub serve` processes over one PostgreSQL database: both
 * report the same `lastSeen` / `online`, and each change is announced exactly once
 * (`$device-online` / `$device-offline`) although both instances sweep.
 */
import type { Test as Tap } from 'tap'
import { runCli } from '../fixtures/cli.js'
import type { CliProcess } from '../fixtures/cli.js'
import { call, sleep } from '../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

const SECRET = 'two-instances-presence-jwt-secret'
const PASSWORD = 'two-instances-presence-password'


async function serve (t: Tap, db: string): Promise<{ cli: CliProcess, url: string }> {
  const cli = runCli(['serve', '--db', db, '--port', '0', '--jwt-secret', SECRET, '--admin-password', PASSWORD, '--log-level', 'warn',
    '--presence-window', '2s', '--presence-notifications', '--no-console'])
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

postgresTest('two instances agree on presence and announce each change once', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const [a, b] = await Promise.all([serve(t, db), serve(t, db)])
  const [tokenA, tokenB] = await Promise.all([login(a.url), login(b.url)])
  const device = 'presence-device'
  t.equal((await call(`${a.url}/device/${device}`, tokenA, { method: 'PUT', body: { name: 'Presence' } })).status, 204)
  t.match((await call(`${b.url}/device/${device}`, tokenB)).body, { lastSeen: null, online: false }, 'never seen, on both')

  // The device posts on A; B sees it online with the same lastSeen.
  t.equal((await call(`${a.url}/device/${device}/notification`, tokenA, { method: 'POST', body: { notification: 'hello' } })).status, 201)
  const onA = (await call(`${a.url}/device/${device}`, tokenA)).body
  const onB = (await call(`${b.url}/device/${device}`, tokenB)).body
  t.equal(onA.online, true)
  t.equal(onB.online, true, 'B agrees: online')
  t.equal(onB.lastSeen, onA.lastSeen, 'B agrees: same lastSeen')
  t.same((await call(`${b.url}/device?online=true`, tokenB)).body.map((d: { id: string }) => d.id), [device])

  // Both instances sweep; the window passes: exactly one $device-offline.
  await sleep(4500)
  t.equal((await call(`${a.url}/device/${device}`, tokenA)).body.online, false, 'offline on A')
  t.equal((await call(`${b.url}/device/${device}`, tokenB)).body.online, false, 'offline on B')
  t.same((await call(`${a.url}/device?online=false`, tokenA)).body.map((d: { id: string }) => d.id), [device])

  // The device polls for commands on B and on A at once: one $device-online.
  await Promise.all([
    call(`${b.url}/device/${device}/command/poll?waitTimeout=0`, tokenB),
    call(`${a.url}/device/${device}/command/poll?waitTimeout=0`, tokenA)
  ])
  const list = (await call(`${a.url}/device/${device}/notification?sortField=timestamp&sortOrder=ASC`, tokenA)).body as Array<{ notification: string }>
  t.same(list.map((n) => n.notification), ['$device-add', '$device-online', 'hello', '$device-offline', '$device-online'],
    'each change announced once although both instances watch the same device')

  a.cli.child.kill('SIGTERM')
  b.cli.child.kill('SIGTERM')
  t.same(await Promise.all([a.cli.exited, b.cli.exited]), [0, 0], 'both exit cleanly on SIGTERM')
})
