/** `devicehub serve --trust-proxy` (issue #22): behind a proxy, login throttling counts per client. */
import t from 'tap'
import { runCli } from '../fixtures/cli.js'

t.setTimeout(300_000)

async function login (url: string, password: string, from: string): Promise<number> {
  const res = await fetch(`${url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ login: 'dhadmin', password })
  })
  return res.status
}

t.test('DEVICEHUB_TRUST_PROXY: a client guessing behind the proxy does not hold back the admin behind it', async (t) => {
  const server = runCli(['serve', '--db', ':memory:', '--port', '0', '--log-level', 'warn'],
    { DEVICEHUB_TRUST_PROXY: '127.0.0.1', DEVICEHUB_ADMIN_PASSWORD: 'admin-password-behind-proxy' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const [, url] = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/api\/rest)/)
  const statuses = []
  for (let i = 0; i < 6; i++) statuses.push(await login(url!, `guess-${i}`, '203.0.113.9'))
  t.same(statuses, [401, 401, 401, 401, 401, 429], 'the guessing client is held back')
  t.equal(await login(url!, 'admin-password-behind-proxy', '192.0.2.1'), 201, 'another client of the same proxy is not')
  t.equal(await login(url!, 'admin-password-behind-proxy', '203.0.113.9'), 429, 'the guesser waits, right password or not')
})

t.test('--trust-proxy refuses a value that is no address list', async (t) => {
  const bad = runCli(['serve', '--db', ':memory:', '--port', '0', '--trust-proxy', '10.0.0.1;rm'])
  t.equal(await bad.exited, 1)
  t.match(bad.stderr(), /--trust-proxy/)
  t.match(bad.stderr(), /expected addresses or CIDR ranges/)
})
