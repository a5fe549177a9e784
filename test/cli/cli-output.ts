/** The CLI's messages and logs as a new user meets them, through the real CLI (issue #13). */
import t from 'tap'
import { runCli } from '../fixtures/cli.js'

t.setTimeout(300_000)

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+\/[^\s]*)/

t.test('CLI errors: one line and a hint, no help dump; durations need a unit', async (t) => {
  const bad = runCli(['serve', '--port', 'abc'])
  t.equal(await bad.exited, 1)
  t.match(bad.stderr(), /--port/)
  t.match(bad.stderr(), /add --help/)
  t.notMatch(bad.stderr(), /Options:|Usage:/, 'not the whole help')
  t.ok(bad.stderr().trim().split('\n').length <= 2)

  const bare = runCli(['serve', '--retention', '90', '--db', ':memory:'])
  t.equal(await bare.exited, 1)
  t.match(bare.stderr(), /'90' has no unit: write 90s, 90m, 90h or 90d/)

  const unknown = runCli(['serve', '--prot', '8080'])
  t.equal(await unknown.exited, 1)
  t.match(unknown.stderr(), /unknown option '--prot'/)
  t.notMatch(unknown.stderr(), /Options:/)
})

t.test('--help lists every flag of every command, without internal labels', async (t) => {
  const help = runCli(['--help'])
  t.equal(await help.exited, 0)
  const text = help.stdout()
  for (const flag of ['--port', '--host', '--base-path', '--db', '--jwt-secret', '--admin-login', '--admin-password',
    '--access-token-lifetime', '--refresh-token-lifetime', '--retention', '--max-take', '--body-limit', '--log-level',
    '--log-format', '--metrics', '--trust-proxy', '--login', 'DEVICEHUB_PORT']) {
    t.match(text, flag, flag)
  }
  t.notMatch(text, /\(R\d+\)|\(D\d+\)/, 'no spec labels')
})

t.test('logs: JSON lines on stdout when not a terminal, one per request; banner on stderr; pretty on request', async (t) => {
  const json = runCli(['serve', '--db', ':memory:', '--port', '0', '--metrics'])
  t.teardown(() => { json.child.kill('SIGKILL') })
  const [, url] = await json.waitFor(LISTENING)
  await fetch(`${url}/info`)
  const scrape = await fetch(`${new URL(url!).origin}/metrics`)
  t.equal(scrape.status, 200)
  t.match(await scrape.text(), /devicehub_http_requests_total\{method="GET",route="\/api\/rest\/info",status="200"\} 1/)
  await json.waitFor(/"url":"\/metrics"/)
  json.child.kill('SIGTERM')
  await json.exited
  const lines = json.stdout().trim().split('\n')
  for (const line of lines) t.doesNotThrow(() => JSON.parse(line), `JSON: ${line.slice(0, 60)}`)
  const infoLines = lines.filter((line) => line.includes('/api/rest/info'))
  t.equal(infoLines.length, 1, 'one line per request')
  t.match(JSON.parse(infoLines[0]!), { msg: 'request completed', req: { method: 'GET', url: '/api/rest/info' }, res: { statusCode: 200 } })
  t.notMatch(json.stdout(), /listening on|get a token|created admin/, 'the banner is not in the JSON stream')
  t.match(json.stderr(), /created admin/)

  const pretty = runCli(['serve', '--db', ':memory:', '--port', '0', '--log-format', 'pretty'])
  t.teardown(() => { pretty.child.kill('SIGKILL') })
  const [, url2] = await pretty.waitFor(LISTENING)
  await fetch(`${url2}/info`)
  await pretty.waitFor(/GET \/api\/rest\/info 200 [\d.]+ms/)
  t.notMatch(pretty.stdout(), /^\{/m, 'no JSON')
  t.match(pretty.stdout(), /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO/m, 'readable timestamps')
  pretty.child.kill('SIGTERM')
  await pretty.exited
})
