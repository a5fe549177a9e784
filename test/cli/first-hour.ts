/** What a new user meets in the first hour, through the real CLI (issue #13). */
import t from 'tap'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { runCli } from '../fixtures/cli.js'

// Each case spawns CLI processes, slow on a loaded machine.
t.setTimeout(300_000)

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+\/[^\s]*)/

t.test('a start that fails on a busy port creates no admin: the next start prints the password', async (t) => {
  const db = join(t.testdir(), 'busy.db')
  const blocker = createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => blocker.close())
  const port = (blocker.address() as AddressInfo).port
  const failed = runCli(['serve', '--db', db, '--port', String(port), '--log-level', 'silent'])
  t.equal(await failed.exited, 1)
  t.match(failed.stderr(), /EADDRINUSE|address already in use/)
  t.notMatch(failed.stderr(), /created admin/, 'no admin was created')
  t.notOk(existsSync(`${db}.lock`), 'the lock is released')

  const next = runCli(['serve', '--db', db, '--port', '0', '--log-level', 'silent'])
  t.teardown(() => { next.child.kill('SIGKILL') })
  const [, password] = await next.waitFor(/created admin 'dhadmin' with password (\S+)/)
  const [, url] = await next.waitFor(LISTENING)
  const login = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password }) })
  t.equal(login.status, 201, 'the printed password works')
  next.child.kill('SIGTERM')
  t.equal(await next.exited, 0)
})

t.test('a second serve on the same SQLite file is refused, naming the other process', async (t) => {
  const db = join(t.testdir(), 'shared.db')
  const first = runCli(['serve', '--db', db, '--port', '0', '--log-level', 'silent'])
  t.teardown(() => { first.child.kill('SIGKILL') })
  await first.waitFor(LISTENING)
  const second = runCli(['serve', '--db', db, '--port', '0', '--log-level', 'silent'])
  t.equal(await second.exited, 1)
  t.match(second.stderr(), new RegExp(`in use by another devicehub process \\(pid ${first.child.pid}`))
  t.match(second.stderr(), /shared\.db\.lock/)
  t.equal(second.stderr().trim().split('\n').length, 1, 'one line')
  const token = runCli(['token', '--login', 'dhadmin', '--db', db])
  t.equal(await token.exited, 0, 'short-lived readers still work while it serves')

  first.child.kill('SIGKILL')
  await first.exited
  t.ok(existsSync(`${db}.lock`), 'a killed server leaves its lock behind')
  const third = runCli(['serve', '--db', db, '--port', '0', '--log-level', 'silent'])
  t.teardown(() => { third.child.kill('SIGKILL') })
  await third.waitFor(LISTENING)
  t.pass('a stale lock (its process is gone) is taken over')
  third.child.kill('SIGTERM')
  t.equal(await third.exited, 0)
  t.notOk(existsSync(`${db}.lock`), 'a clean stop removes the lock')
})

t.test('token refuses a database file that does not exist', async (t) => {
  const db = join(t.testdir(), 'typo.db')
  const token = runCli(['token', '--login', 'dhadmin', '--db', db])
  t.equal(await token.exited, 1)
  t.match(token.stderr(), /No database at .*typo\.db/)
  t.equal(token.stdout(), '', 'no token printed')
  t.notOk(existsSync(db), 'nothing was created')
})

t.test('--base-path without a leading slash; the banner links the docs and health', async (t) => {
  const cli = runCli(['serve', '--db', ':memory:', '--port', '0', '--base-path', 'foo/', '--log-level', 'silent'], { DEVICEHUB_METRICS: 'false' })
  t.teardown(() => { cli.child.kill('SIGKILL') })
  const [, url] = await cli.waitFor(LISTENING)
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+\/foo$/)
  await cli.waitFor(/get a token/)
  t.match(cli.stderr(), `API docs: ${url}/docs`)
  t.match(cli.stderr(), `health: ${url}/health/ready`)
  t.equal((await fetch(`${url}/health`)).status, 200)
  t.equal((await fetch(`${url}/docs`)).status, 200)
  t.match(await (await fetch(new URL(url!).origin)).json(), { api: '/foo', docs: '/foo/docs' })
  t.equal((await fetch(`${new URL(url!).origin}/metrics`)).status, 404, 'DEVICEHUB_METRICS=false keeps metrics off')
  cli.child.kill('SIGTERM')
  await cli.exited
})

