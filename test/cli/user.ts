/**
 * `devicehub user create|passwd|list|unlock` as real processes on a real SQLite file
 * (issues #13, #16): the recovery path for a locked admin, without a server or a token.
 */
import t from 'tap'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../fixtures/cli.js'

async function run (args: string[], env: Record<string, string> = {}): Promise<{ code: number | null, out: string, err: string }> {
  const cli = runCli(args, env)
  const code = await cli.exited
  return { code, out: cli.stdout(), err: cli.stderr() }
}

async function login (url: string, name: string, password: string): Promise<number> {
  const res = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: name, password }) })
  return res.status
}

t.test('devicehub user: create, list, passwd, unlock on the database directly', async (t) => {
  const dir = t.testdir()
  const db = join(dir, 'hub.db')

  const missing = await run(['user', 'list', '--db', join(dir, 'nope.db')])
  t.equal(missing.code, 1, 'a database file that does not exist is refused')
  t.match(missing.err, /No database at .*nope\.db: check --db/, 'in the same words as token')
  t.notOk(existsSync(join(dir, 'nope.db')), 'and not created')

  t.equal((await run(['migrate', '--db', db])).code, 0)
  const created = await run(['user', 'create', '--login', 'ops-admin', '--role', 'admin', '--db', db])
  t.equal(created.code, 0, created.err)
  const [, generated] = /password: (\S+)/.exec(created.out) ?? []
  t.ok(generated, 'a generated password is printed once')
  const client = await run(['user', 'create', '--login', 'field-client', '--db', db], { DEVICEHUB_USER_PASSWORD: 'client-password-1' })
  t.equal(client.code, 0, client.err)
  t.notMatch(client.out, /client-password-1/, 'a given password is never printed')
  t.equal((await run(['user', 'create', '--login', 'ops-admin', '--db', db])).code, 1, 'duplicate login refused')
  t.equal((await run(['user', 'create', '--login', 'x', '--db', db])).code, 1, 'short login refused')
  t.equal((await run(['user', 'create', '--login', 'short-pw', '--password', '123', '--db', db])).code, 1, 'short password refused')

  const listed = await run(['user', 'list', '--json', '--db', db])
  t.equal(listed.code, 0, listed.err)
  const users = JSON.parse(listed.out) as Array<{ id: number, login: string, role: string, status: string }>
  t.match(users, [{ login: 'ops-admin', role: 'admin', status: 'active' }, { login: 'field-client', role: 'client', status: 'active' }])
  const opsId = users[0]!.id
  t.match((await run(['user', 'list', '--db', db])).out, /^id\tlogin\trole\tstatus\tlastLogin\n/)

  // The server accepts what the CLI wrote; a lockout by policy is recovered with `user unlock`.
  const server = runCli(['serve', '--db', db, '--port', '0', '--log-level', 'silent'])
  t.teardown(() => { server.child.kill('SIGKILL') })
  const [, url] = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/api\/rest)/)
  t.equal(await login(url!, 'ops-admin', generated!), 201)
  t.equal(await login(url!, 'field-client', 'client-password-1'), 201)

  const tokenRes = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'ops-admin', password: generated }) })
  const { accessToken } = await tokenRes.json() as { accessToken: string }
  // Another admin exists (the server's first start created dhadmin), so ops-admin may lock itself.
  await fetch(`${url}/user/${opsId}`, { method: 'PUT', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body: '{"status":1}' })
  t.equal((await fetch(`${url}/user/current`, { headers: { authorization: `Bearer ${accessToken}` } })).status, 401, 'locked: its token stops')
  t.equal(await login(url!, 'ops-admin', generated!), 401)

  const unlocked = await run(['user', 'unlock', '--login', 'ops-admin', '--db', db])
  t.equal(unlocked.code, 0, unlocked.err)
  t.match(unlocked.out, /'ops-admin' is active \(was locked\)/)
  await new Promise((resolve) => setTimeout(resolve, 1100)) // the server's read cache lives 1 s
  t.equal(await login(url!, 'ops-admin', generated!), 201, 'unlocked')

  const changed = await run(['user', 'passwd', '--login', 'ops-admin', '--password', 'new-password-9', '--db', db])
  t.equal(changed.code, 0, changed.err)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal(await login(url!, 'ops-admin', 'new-password-9'), 201, 'the new password works')
  t.equal(await login(url!, 'ops-admin', generated!), 401, 'the old one does not')
  t.equal((await run(['user', 'passwd', '--login', 'nobody', '--db', db])).code, 1, 'unknown login refused')
  t.equal((await run(['user', 'unlock', '--login', 'nobody', '--db', db])).code, 1)

  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})
