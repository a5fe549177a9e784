import t from 'tap'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createJwtCodec } from '../../lib/core/auth/jwt.js'
import { runCli } from '../fixtures/cli.js'

// Each case spawns CLI processes, slow on a loaded machine.
t.setTimeout(300_000)

async function login (url: string, password: string): Promise<{ status: number, body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password }) })
  return { status: res.status, body: await res.json() }
}

t.test('devicehub serve: first start, login over HTTP, SIGTERM, restart keeps data and secret', async (t) => {
  const db = join(t.testdir(), 'hub.db')
  const first = runCli(['serve', '--db', db, '--port', '0', '--log-level', 'info'])
  t.teardown(() => { first.child.kill('SIGKILL') })
  const [, url] = await first.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/api\/rest)/)
  const [, password] = await first.waitFor(/created admin 'dhadmin' with password (\S+)/)
  // The banner's lines may arrive in more than one chunk: wait for the one asked about.
  t.ok(await first.waitFor(/curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/api\/rest\/token/), 'prints how to get a token')
  t.notMatch(first.stderr(), /WARNING/, 'the generated secret is long enough')
  const loggedIn = await login(url!, password!)
  t.equal(loggedIn.status, 201)
  await login(url!, 'wrong-password-here')
  const setting = await fetch(`${url}/configuration/kept`, { method: 'PUT', headers: { authorization: `Bearer ${loggedIn.body.accessToken}`, 'content-type': 'application/json' }, body: '{"value":"yes"}' })
  t.equal(setting.status, 200)

  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0, 'exits cleanly on SIGTERM')
  t.match(first.stderr(), /SIGTERM: closing/)
  t.match(first.stderr(), /closed/)
  const output = first.stdout() + first.stderr()
  t.equal(output.split(password!).length - 1, 1, 'the generated password is printed exactly once and never logged')
  t.notMatch(output, 'wrong-password-here', 'passwords never logged')
  t.notMatch(output, loggedIn.body.accessToken, 'tokens never logged')
  t.match(output, /"msg":"request completed"/, 'structured request logs')

  const second = runCli(['serve', '--db', db, '--port', '0', '--log-level', 'warn'])
  t.teardown(() => { second.child.kill('SIGKILL') })
  const [, url2] = await second.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/api\/rest)/)
  t.notMatch(second.stderr(), /created admin/, 'bootstrap is idempotent')
  const kept = await fetch(`${url2}/configuration/kept`, { headers: { authorization: `Bearer ${loggedIn.body.accessToken}` } })
  t.equal(kept.status, 200, 'a token from the first run still verifies: the secret was kept')
  t.same(await kept.json(), { name: 'kept', value: 'yes', entityVersion: 0 }, 'data was kept')
  t.equal((await login(url2!, password!)).status, 201)

  const tokenCmd = runCli(['token', '--login', 'dhadmin', '--db', db])
  t.equal(await tokenCmd.exited, 0, tokenCmd.stderr())
  const tokens = JSON.parse(tokenCmd.stdout()) as { accessToken: string }
  const withCliToken = await fetch(`${url2}/configuration/kept`, { headers: { authorization: `Bearer ${tokens.accessToken}` } })
  t.equal(withCliToken.status, 200, 'devicehub token prints tokens the server accepts')

  second.child.kill('SIGINT')
  t.equal(await second.exited, 0, 'exits cleanly on SIGINT')
})

/** A port that was free a moment ago (the server under test must know it before its banner). */
async function freePort (): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

t.test('devicehub serve: a login sent the moment the port accepts gets 201, never 401 (#22)', async (t) => {
  const port = await freePort()
  const cli = runCli(['serve', '--db', join(t.testdir(), 'fresh.db'), '--port', String(port), '--log-level', 'silent', '--trust-proxy', 'true'], {
    DEVICEHUB_ADMIN_PASSWORD: 'chosen-password'
  })
  t.teardown(() => { cli.child.kill('SIGKILL') })
  const url = `http://127.0.0.1:${port}/api/rest`
  // Knock until the port accepts: the first request answered is a login with the right password,
  // sent while the server may still be creating the admin.
  let first: { status: number, body: any } | undefined // eslint-disable-line @typescript-eslint/no-explicit-any
  while (first === undefined) {
    if (cli.child.exitCode !== null) throw new Error(`serve exited: ${cli.stderr()}`)
    first = await fetch(`${url}/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password: 'chosen-password' })
    }).then(async (res) => ({ status: res.status, body: await res.json() }), () => undefined)
  }
  t.equal(first.status, 201, `the first answer: ${first.status} ${String(first.body.message ?? '')}`)
  const ready = await fetch(`${url}/health/ready`)
  t.equal(ready.status, 200)
  const info = await (await fetch(`${url}/info`, { headers: { 'x-forwarded-host': 'dh.example', 'x-forwarded-proto': 'https' } })).json() as { webSocketServerUrl: string }
  t.equal(info.webSocketServerUrl, 'wss://dh.example/api/websocket', '--trust-proxy: the proxy\'s headers name the origin')
  cli.child.kill('SIGTERM')
  t.equal(await cli.exited, 0)
})

t.test('devicehub serve honours flags and environment variables', async (t) => {
  const db = join(t.testdir(), 'env.db')
  const cli = runCli(['serve', '--port', '0', '--base-path', '/dh/rest', '--log-level', 'silent'], {
    DEVICEHUB_DB: db,
    DEVICEHUB_ADMIN_LOGIN: 'root-admin',
    DEVICEHUB_ADMIN_PASSWORD: 'chosen-password',
    JWT_SECRET: 'devicehive',
    DEVICEHUB_JWT_KEY_DERIVATION: 'devicehive',
    DEVICEHUB_PUBLIC_URL: 'https://iot.example.com'
  })
  t.teardown(() => { cli.child.kill('SIGKILL') })
  const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/dh\/rest)/)
  t.notMatch(cli.stdout() + cli.stderr(), /chosen-password/, 'a given password is never printed')
  const res = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'root-admin', password: 'chosen-password' }) })
  t.equal(res.status, 201)
  const { accessToken } = await res.json() as { accessToken: string }
  // Signed with `devicehive` through DeviceHive's key derivation: the same signature a DeviceHive server makes.
  t.match(accessToken, /^eyJhbGciOiJIUzI1NiJ9\./)
  t.equal(createJwtCodec('devicehive', 'devicehive').decode(accessToken).t, 1, 'DeviceHive\'s key verifies it')
  t.match(cli.stderr(), /WARNING: The JWT secret gives only 6 bytes of HMAC key.*ignores part of this secret/, 'the weak secret is reported loudly')
  const info = await (await fetch(`${url}/info`, { headers: { 'x-forwarded-host': 'evil.example' } })).json() as { webSocketServerUrl: string }
  t.equal(info.webSocketServerUrl, 'wss://iot.example.com/dh/websocket', 'DEVICEHUB_PUBLIC_URL names the origin')
  cli.child.kill('SIGTERM')
  t.equal(await cli.exited, 0)
})

t.test('devicehub refuses bad flags with a message', async (t) => {
  const bad = runCli(['serve', '--port', 'abc'])
  t.not(await bad.exited, 0)
  t.match(bad.stderr(), /--port/)
  const badUrl = runCli(['serve', '--public-url', 'iot.example.com/dh'])
  t.not(await badUrl.exited, 0)
  t.match(badUrl.stderr(), /--public-url.*must be an http\(s\) origin/)
  const help = runCli(['--help'])
  t.equal(await help.exited, 0)
  for (const command of ['serve', 'migrate', 'token']) t.match(help.stdout(), command)
  const serveHelp = runCli(['serve', '--help'])
  await serveHelp.exited
  for (const flag of ['--port', '--host', '--base-path', '--db', '--jwt-secret', '--admin-login', '--admin-password', '--access-token-lifetime', '--refresh-token-lifetime', '--log-level', 'DEVICEHUB_PORT',
    '--public-url', '--trust-proxy', '--jwt-key-derivation']) {
    t.match(serveHelp.stdout(), flag)
  }
  const migrate = runCli(['migrate', '--db', ':memory:'])
  t.equal(await migrate.exited, 0)
  // A new database (`:memory:` always is) says what it created, not that it was up to date (#27).
  t.match(migrate.stdout(), /was empty: created every table/)
})
