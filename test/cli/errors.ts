/**
 * Bad input to the CLI, through real processes (issue #27): each refusal is one line on stderr
 * naming what is wrong in the operator's words, the exit code is 1, and nothing claims to
 * listen before a refusal.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { runCli } from '../fixtures/cli.js'

// Each case spawns CLI processes, slow on a loaded machine.
t.setTimeout(300_000)

interface Refusal { code: number | null, line: string, out: string }

/** Runs the CLI to its end; the refusal must be exactly one line on stderr. */
async function refuse (t: Tap, args: string[], env: Record<string, string> = {}): Promise<Refusal> {
  const cli = runCli(args, env)
  const code = await cli.exited
  const lines = cli.stderr().trim().split('\n')
  t.equal(lines.length, 1, `one line on stderr for ${args.join(' ')}: ${cli.stderr()}`)
  t.equal(code, 1, `exit 1 for ${args.join(' ')}`)
  t.notMatch(cli.stdout() + cli.stderr(), /listening/i, `nothing listened for ${args.join(' ')}`)
  return { code, line: lines[0]!, out: cli.stdout() }
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const SERVE = ['serve', '--port', '0', '--log-level', 'info', '--log-format', 'json']

t.test('serve refuses a bad --db naming the path or the URL', async (t) => {
  const dir = t.testdir({ 'not-a-db.db': 'hello, not SQLite' })
  const [missingDir, mysql, directory, notDb] = await Promise.all([
    refuse(t, [...SERVE, '--db', join(dir, 'no', 'such', 'x.db')]),
    refuse(t, [...SERVE, '--db', 'mysql://app:secret-pw@db.internal/devices']),
    refuse(t, [...SERVE, '--db', dir]),
    refuse(t, [...SERVE, '--db', join(dir, 'not-a-db.db')])
  ])
  t.equal(missingDir.line, `devicehub: Cannot create the database ${join(dir, 'no', 'such', 'x.db')}: the directory ${join(dir, 'no', 'such')} ` +
    'does not exist (create it first, or choose another path)')
  t.notMatch(missingDir.line, /ENOENT|\.lock/, 'no raw error about the lock file')
  t.equal(mysql.line, 'devicehub: Unsupported database URL mysql://app:****@db.internal/devices: devicehub stores its data in SQLite ' +
    '(a file path, or :memory:) or in PostgreSQL (a postgres:// or postgresql:// URL)')
  t.notMatch(mysql.line, /secret-pw/, 'the password is masked')
  t.match(directory.line, `devicehub: ${dir} is a directory, not a database file: give a file path such as ${join(dir, 'devicehub.db')}`)
  t.match(notDb.line, /not-a-db\.db is not a SQLite database/)
  t.notOk(existsSync(join(dir, 'no')), 'nothing was created')
})

t.test('an empty --db or DEVICEHUB_DB is refused, not served as a throwaway database', async (t) => {
  const message = 'devicehub: The database location is empty (--db or DEVICEHUB_DB): give a SQLite file path, :memory:, ' +
    'or a postgres:// URL (unset DEVICEHUB_DB for the default ./devicehub.db)'
  const refusals = await Promise.all([
    refuse(t, [...SERVE, '--db', '']),
    refuse(t, SERVE, { DEVICEHUB_DB: '' }),
    refuse(t, ['token', '--db', ' ', '--login', 'dhadmin']),
    refuse(t, ['migrate'], { DEVICEHUB_DB: '' })
  ])
  for (const refusal of refusals) t.equal(refusal.line, message)
})

t.test('serve refuses the root as --base-path and a short --admin-password before it listens', async (t) => {
  const [empty, root, param, password, envPassword] = await Promise.all([
    refuse(t, [...SERVE, '--db', ':memory:', '--base-path', '']),
    refuse(t, [...SERVE, '--db', ':memory:', '--base-path', '/']),
    refuse(t, [...SERVE, '--db', ':memory:', '--base-path', '/api/:id']),
    refuse(t, [...SERVE, '--db', ':memory:', '--admin-password', 'abc']),
    refuse(t, [...SERVE, '--db', ':memory:'], { DEVICEHUB_ADMIN_PASSWORD: 'abcd' })
  ])
  t.equal(empty.line, "devicehub: --base-path '' (DEVICEHUB_BASE_PATH): the REST API needs a path of its own, such as /api/rest " +
    '(the root lists the links and serves /metrics)')
  t.match(root.line, "--base-path '/' (DEVICEHUB_BASE_PATH): the REST API needs a path of its own")
  t.match(param.line, "--base-path '/api/:id' (DEVICEHUB_BASE_PATH): ':id' is not a path segment")
  t.equal(password.line, 'devicehub: --admin-password (DEVICEHUB_ADMIN_PASSWORD): the admin password must have 6 to 128 characters (this one has 3)')
  t.notMatch(password.line, /abc/, 'the password is not echoed')
  t.match(envPassword.line, /this one has 4\)$/)
  t.equal(password.out, '', 'no log line: the server never started')
})

t.test('simulate against a closed port names the URL and the cause', async (t) => {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const port = (probe.address() as AddressInfo).port
  await new Promise((resolve) => probe.close(resolve))
  const url = `http://127.0.0.1:${port}/api/rest`
  const [withToken, withLogin] = await Promise.all([
    refuse(t, ['simulate', '--url', url, '--token', 'x', '--duration', '1s']),
    refuse(t, ['simulate', '--url', url, '--login', 'dhadmin', '--password', 'whatever', '--duration', '1s'])
  ])
  for (const { line } of [withToken, withLogin]) {
    t.equal(line, `devicehub: cannot reach ${url} (connect ECONNREFUSED 127.0.0.1:${port}): is the server running, and is --url its REST base URL?`)
  }
})

t.test('migrate says what it did; token and user refuse a missing database in the same words', async (t) => {
  const dir = t.testdir()
  mkdirSync(join(dir, 'data'))
  const db = join(dir, 'data', 'new.db')
  const created = runCli(['migrate', '--db', db])
  t.equal(await created.exited, 0, created.stderr())
  t.match(created.stdout(), new RegExp(`^Created database ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: applied \\d+ migrations \\(0001-initial … \\d{4}-[\\w-]+\\)\\.\\n$`))
  const again = runCli(['migrate', '--db', db])
  t.equal(await again.exited, 0, again.stderr())
  t.match(again.stdout(), /is up to date \(\d+ migrations, the last \d{4}-[\w-]+\); nothing to apply\./)

  const missing = join(dir, 'data', 'typo.db')
  const expected = `devicehub: No database at ${missing}: check --db (or DEVICEHUB_DB); 'devicehub serve' or 'devicehub migrate' creates a new one`
  const refusals = await Promise.all([
    refuse(t, ['token', '--login', 'dhadmin', '--db', missing]),
    refuse(t, ['user', 'list', '--db', missing]),
    refuse(t, ['user', 'create', '--login', 'someone', '--db', missing]),
    refuse(t, ['user', 'unlock', '--login', 'dhadmin', '--db', missing])
  ])
  for (const { line, out } of refusals) {
    t.equal(line, expected)
    t.equal(out, '')
  }
  t.notOk(existsSync(missing), 'nothing was created')
})
