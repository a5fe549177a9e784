/**
 * `devicehub user passwd` on the database of a running server ends the open waits of the user's
 * old tokens, and only theirs. On SQLite the CLI and the server are two processes on one file, so
 * nothing rings the server's bus: it sees the file's commit itself (`PRAGMA data_version`) and
 * resyncs, which re-checks every wait's rights. On PostgreSQL the CLI sends the `revoke` on the
 * servers' NOTIFY channel with its change. Until then a password changed to lock out a stolen
 * token left that token's subscriptions delivering.
 */
import t from 'tap'
import type { Test } from 'tap'
import { join } from 'node:path'
import { runCli } from '../fixtures/cli.js'
import { rest as call } from '../fixtures/mqtt-sleepy.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

async function run (args: string[]): Promise<{ code: number | null, err: string }> {
  const cli = runCli(args)
  const code = await cli.exited
  return { code, err: cli.stderr() }
}

/** What a promise settled to within `ms`, or 'waiting'. */
async function within<T> (promise: Promise<T>, ms: number): Promise<T | 'waiting'> {
  let timer: NodeJS.Timeout | undefined
  const waiting = new Promise<'waiting'>((resolve) => { timer = setTimeout(() => resolve('waiting'), ms) })
  try {
    return await Promise.race([promise, waiting])
  } finally {
    clearTimeout(timer)
  }
}

async function passwdEndsOldWaits (t: Test, db: string): Promise<void> {
  t.equal((await run(['migrate', '--db', db])).code, 0)
  for (const login of ['ops-a', 'ops-b']) {
    const created = await run(['user', 'create', '--login', login, '--role', 'admin', '--password', `${login}-password`, '--db', db])
    t.equal(created.code, 0, created.err)
  }
  const server = runCli(['serve', '--db', db, '--port', '0', '--log-level', 'silent'])
  t.teardown(() => { server.child.kill('SIGKILL') })
  const [, url] = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/api\/rest)/)
  const tokenOf = async (login: string): Promise<string> => {
    const res = await fetch(`${url}/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login, password: `${login}-password` })
    })
    return ((await res.json()) as { accessToken: string }).accessToken
  }
  const a = await tokenOf('ops-a')
  const b = await tokenOf('ops-b')
  const network = await call(url!, b, 'POST', '/network', { name: 'cli-revoke-net' })
  t.equal(network.status, 201)
  const device = await call(url!, b, 'PUT', '/device/cli-revoke-device', { name: 'd', networkId: (network.body as { id: number }).id })
  t.equal(device.status, 204)

  const poll = '/device/cli-revoke-device/notification/poll?waitTimeout=30'
  const aWait = call(url!, a, 'GET', poll)
  const bWait = call(url!, b, 'GET', poll)
  t.equal(await within(aWait, 600), 'waiting', 'both polls are parked')

  const changed = await run(['user', 'passwd', '--login', 'ops-a', '--password', 'ops-a-new-password', '--db', db])
  t.equal(changed.code, 0, changed.err)
  const ended = await within(aWait, 3000)
  t.same(ended, { status: 200, body: [] }, 'the old token\'s poll ends at once, empty (it waited 30 s before)')
  t.equal((await call(url!, a, 'GET', '/user/current')).status, 401, 'and the old token is refused now, not after the 1 s read cache')
  t.equal(await within(bWait, 300), 'waiting', 'the other admin\'s poll goes on')

  const sent = await call(url!, b, 'POST', '/device/cli-revoke-device/notification', { notification: 'after-passwd' })
  t.equal(sent.status, 201)
  const delivered = await within(bWait, 5000)
  t.match(delivered, { status: 200, body: [{ notification: 'after-passwd' }] }, 'and receives the next notification')

  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
}

const title = 'a password changed by the CLI ends the old tokens\' waits on a running server, and no one else\'s'
t.test(`${title} (SQLite)`, async (t) => passwdEndsOldWaits(t, join(t.testdir(), 'hub.db')))
postgresTest(`${title} (PostgreSQL)`, async (t, adminUrl) => passwdEndsOldWaits(t, await createTestDatabase(t, adminUrl)))
