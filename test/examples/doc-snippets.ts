/**
 * Every code block of README.md and docs/*.md, executed against the BUILT package (dist/, as
 * `npm install devicehub` would give it), so a snippet cannot rot (issue #27). Each block is
 * listed below by its file and a piece of its text: either run (sh blocks in bash against a
 * started `devicehub serve`, ts blocks with `import ... from 'devicehub'` through tsx) or
 * marked not runnable with the reason. A block in neither list fails the first test.
 *
 * What a run changes in a block, and only that: the origin `http://127.0.0.1:8080` (or
 * `localhost:8080`) becomes the test server's, `<password>` / `...` its admin password, a long
 * `--duration` a short one; `npx devicehub` / `devicehub` run dist/bin/devicehub.js (a shell
 * function, so npx never reaches the registry). Snippets live in a directory inside the package,
 * so `'devicehub'` resolves to the package itself (dist/, through its `exports`).
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { ROOT } from '../fixtures/cli.js'

t.setTimeout(600_000)

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface Block { file: string, line: number, lang: string, text: string }

const BIN = join(ROOT, 'dist', 'bin', 'devicehub.js')
const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
const PASSWORD = 'snippet-admin-password'

/** Blocks that are not run, each with why. */
const NOT_RUNNABLE: Array<{ file: string, has: string, why: string }> = [
  { file: 'README.md', has: 'npm install && npm start', why: 'reinstalls node_modules and serves on the fixed port 8080 until stopped (npm start is dist/bin/devicehub.js serve, which the tour runs); npm test is this suite' },
  { file: 'docs/architecture.md', has: 'bin/devicehub.ts', why: 'a file tree, not a program' },
  { file: 'docs/deployment.md', has: 'openssl rand -hex 32', why: 'a production start: /var/lib/devicehub, port 8080, runs until stopped' },
  { file: 'docs/deployment.md', has: '[Unit]', why: 'a systemd unit file' },
  { file: 'docs/deployment.md', has: 'load balancer', why: 'a diagram' },
  { file: 'docs/deployment.md', has: 'export DEVICEHUB_DB=postgres', why: 'needs a PostgreSQL server and runs until stopped' },
  { file: 'docs/operations.md', has: '"status": "fail"', why: 'a sample answer' },
  { file: 'docs/operations.md', has: 'livenessProbe', why: 'Kubernetes configuration' },
  { file: 'docs/operations.md', has: 'docker build', why: 'needs Docker (test/deploy/container.ts builds the image when Docker is there)' },
  { file: 'docs/operations.md', has: 'docker compose up', why: 'needs Docker' },
  { file: 'docs/plugins.md', has: '"proxyEndpoint"', why: 'a sample answer' },
  { file: 'docs/plugins.md', has: '"filter"', why: 'a sample answer' },
  { file: 'docs/plugins.md', has: 'new WebSocket(proxyEndpoint)', why: 'a fragment (proxyEndpoint, topic, cursor come from the text); examples/plugin-logger.ts is the whole program and examples.ts runs it' },
  { file: 'docs/plugins.md', has: '→ {"id":"a1"', why: 'a protocol transcript' },
  { file: 'docs/plugins.md', has: '{"t":"notif"', why: 'a sample frame' },
  { file: 'docs/plugins.md', has: '{"b":{"command"', why: 'a sample message' },
  { file: 'docs/plugins.md', has: '{"id":"s2"', why: 'a sample frame' },
  { file: 'docs/realtime.md', has: '"action": "authenticate"', why: 'a protocol transcript' },
  { file: 'docs/realtime.md', has: '"action": "notification/subscribe"', why: 'a protocol transcript' },
  { file: 'docs/realtime.md', has: 'app.register(fastifyWebsocket)', why: 'a fragment (hub comes from README\'s embedding example, which runs)' },
  { file: 'docs/realtime.md', has: 'id: 1795357294180', why: 'a sample event stream' },
  { file: 'docs/testing.md', has: '"type":"frame"', why: 'a sample transcript' }
]

/** Blocks that are run, by file and a piece of their text (the runs are the tests below). */
const RUNNABLE: Array<{ file: string, has: string }> = [
  { file: 'README.md', has: 'BASE=http://127.0.0.1:8080/api/rest' },
  { file: 'README.md', has: 'devicehubPlugin, { hub, prefix: \'/iot/api/rest\' }' },
  { file: 'README.md', has: 'rig.simulateDevice(\'led-1\'' },
  { file: 'README.md', has: 'devicehub serve     start the REST server' },
  { file: 'docs/testing.md', has: 'rig.simulateDevice(\'led-1\'' },
  { file: 'docs/testing.md', has: 'npx devicehub simulate' },
  { file: 'docs/security.md', has: 'devicehub user list' },
  { file: 'docs/plugins.md', has: 'curl -X POST "http://localhost:8080/api/rest/plugin?' },
  { file: 'docs/plugins.md', has: 'plugin/count?namePattern' },
  { file: 'docs/plugins.md', has: '# activate' },
  { file: 'docs/plugins.md', has: 'curl -X DELETE' }
]

function readBlocks (file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l))
    blocks.push({ file, line: i + 1, lang: open[1]!, text: lines.slice(i + 1, end).join('\n') })
    i = end
  }
  return blocks
}

const ALL = FILES.flatMap(readBlocks)

function block (file: string, has: string): Block {
  const found = ALL.filter((b) => b.file === file && b.text.includes(has))
  if (found.length !== 1) throw new Error(`${file}: ${found.length} blocks contain ${JSON.stringify(has)}`)
  return found[0]!
}

async function freePort (): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/** The environment of a snippet: a user's shell, not tap's (no NODE_OPTIONS) nor devicehub settings of this one. */
function childEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of Object.keys(env)) if (name === 'NODE_OPTIONS' || /^(DEVICEHUB_|JWT_SECRET$)/.test(name)) delete env[name]
  return { ...env, ...extra }
}

interface Run { code: number | null, out: string, err: string }

function run (command: string, args: string[], options: { cwd: string, env?: Record<string, string>, input?: string }): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: childEnv(options.env) })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
    child.on('exit', (code) => resolve({ code, out, err }))
    child.stdin.end(options.input ?? '')
  })
}

/** The shell functions that stand for the installed CLI. */
const SHIMS = `devicehub () { node ${JSON.stringify(BIN)} "$@"; }
npx () { if [ "$1" = devicehub ]; then shift; devicehub "$@"; else echo "npx $1: not in the snippet shims" >&2; return 1; fi; }
set -e -o pipefail
`

async function bash (t: Tap, b: Block, cwd: string, substitutions: Array<[string | RegExp, string]>, env: Record<string, string> = {}): Promise<Run> {
  let text = b.text
  for (const [from, to] of substitutions) text = text.replaceAll(from, to)
  const result = await run('bash', ['-s'], { cwd, env, input: SHIMS + text })
  t.equal(result.code, 0, `${b.file}:${b.line} exits 0: ${result.err}`)
  return result
}

async function tsx (t: Tap, b: Block, dir: string, name: string, env: Record<string, string> = {}): Promise<Run> {
  const file = join(dir, `${name}.ts`)
  writeFileSync(file, b.text + '\n')
  const result = await run(process.execPath, ['--import', 'tsx', file], { cwd: dir, env })
  t.equal(result.code, 0, `${b.file}:${b.line} exits 0: ${result.err}`)
  return result
}

t.test('every code block of README.md and docs/ is run below or marked not runnable with a reason', async (t) => {
  for (const b of ALL) {
    const runs = RUNNABLE.filter((r) => r.file === b.file && b.text.includes(r.has))
    const skips = NOT_RUNNABLE.filter((r) => r.file === b.file && b.text.includes(r.has))
    t.equal(runs.length + skips.length, 1, `${b.file}:${b.line} (${b.lang || 'no language'}) is listed once: run it here or say why not`)
  }
  for (const entry of [...RUNNABLE, ...NOT_RUNNABLE]) t.doesNotThrow(() => block(entry.file, entry.has), `${entry.file}: ${entry.has}`)
})

t.test('the snippets against the built package', async (t) => {
  // The package as it ships: compiled sources and the console bundle (npm run build).
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'pipe' })
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')], { cwd: ROOT, stdio: 'pipe' })
  // Inside the package, so `import 'devicehub'` resolves to it (git ignores test-artifacts/).
  const dir = join(ROOT, 'test-artifacts', 'snippets', `run-${process.pid}`)
  mkdirSync(dir, { recursive: true })

  const port = await freePort()
  // MQTT on a free port of its own (1883, the default, may be taken: mosquitto): the tour's `-p 1883` becomes it.
  const mqttPort = await freePort()
  const server = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--mqtt-port', String(mqttPort), '--log-level', 'warn'], {
    cwd: dir, env: childEnv({ DEVICEHUB_ADMIN_PASSWORD: PASSWORD })
  })
  let banner = ''
  server.stderr.on('data', (chunk: Buffer) => { banner += chunk.toString() })
  t.teardown(() => { server.kill('SIGKILL') })
  const origin = `http://127.0.0.1:${port}`
  for (let i = 0; i < 1200 && !banner.includes('get a token') && server.exitCode === null; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.match(banner, `listening on ${origin}/api/rest`)
  const hostSubstitutions: Array<[string | RegExp, string]> = [['http://127.0.0.1:8080', origin], ['http://localhost:8080', origin]]
  const login = await fetch(`${origin}/api/rest/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password: PASSWORD }) })
  const { accessToken } = await login.json() as { accessToken: string }
  const admin = { authorization: `Bearer ${accessToken}` }

  await t.test('README: the short tour', async (t) => {
    const result = await bash(t, block('README.md', 'BASE=http'), dir, [...hostSubstitutions, ['<password>', PASSWORD], ['-p 1883', `-p ${mqttPort}`]])
    t.match(result.out, /"command":"set-temperature"/, 'the device long poll got the command')
    t.match(result.out, /\{"action":"command\/insert","command":\{"id":\d+,"command":"set-fan"/, 'mosquitto_sub got the command sent while it slept')
    t.match(result.out, /"notification":"temperature"/, 'the history lists the notification')
    t.match(result.out, /\{"accessToken":"[^"]+","refreshToken":"[^"]+"\}/, 'npx devicehub token printed tokens')
    const device = await fetch(`${origin}/api/rest/device/thermostat-1`, { headers: admin })
    t.match(await device.json(), { id: 'thermostat-1', name: 'Thermostat', data: { room: 'lab' } })
    // mosquitto_pub's telemetry is stored once its session's queue has run: poll for it.
    const humidity = await fetch(`${origin}/api/rest/device/thermostat-1/notification/poll?names=humidity&timestamp=0&waitTimeout=30`, { headers: admin })
    t.match(await humidity.json(), [{ notification: 'humidity', parameters: { percent: 40 } }], 'the MQTT telemetry was stored')
  })

  await t.test('README: the command list names the real commands', async (t) => {
    const help = await run(process.execPath, [BIN, '--help'], { cwd: dir })
    const listed = [...block('README.md', 'devicehub serve     start').text.matchAll(/^devicehub (\w+)/gm)].map((m) => m[1]!)
    t.same(listed, ['serve', 'migrate', 'token', 'user', 'simulate'])
    for (const command of listed) t.match(help.out, new RegExp(`^  ${command} `, 'm'), `devicehub --help lists ${command}`)
    // The flag table lists every flag of serve.
    const serveHelp = await run(process.execPath, [BIN, 'serve', '--help'], { cwd: dir })
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    for (const [flag] of serveHelp.out.matchAll(/--[a-z][a-z-]+/g)) {
      if (flag !== '--help') t.match(readme, `| \`${flag}\` |`, `README's flag table has ${flag}`)
    }
  })

  await t.test('README: embed in a Fastify app (the plugin under /iot/api/rest)', async (t) => {
    const b = block('README.md', 'devicehubPlugin, { hub, prefix')
    const file = join(dir, 'embed.ts')
    writeFileSync(file, b.text + '\n')
    const embedPort = await freePort()
    // Its own directory: its ./devicehub.db is a new database, so the first start prints a password.
    const cwd = join(dir, 'embed')
    mkdirSync(cwd, { recursive: true })
    const host = spawn(process.execPath, ['--import', 'tsx', file], { cwd, env: childEnv({ PORT: String(embedPort) }) })
    let err = ''
    host.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
    t.teardown(() => { host.kill('SIGKILL') })
    const base = `http://127.0.0.1:${embedPort}/iot/api/rest`
    let health: Response | undefined
    for (let i = 0; i < 1200 && health === undefined && host.exitCode === null; i++) {
      health = await fetch(`${base}/health`).catch(() => undefined)
      if (health === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    t.equal(health?.status, 200, `the embedded API answers: ${err}`)
    const [, password] = /first start: admin 'dhadmin' password (\S+)/.exec(err) ?? []
    t.ok(password, 'the first start printed the generated password')
    const token = await fetch(`${base}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password }) })
    t.equal(token.status, 201, 'the printed password logs in')
    t.equal((await fetch(`${base}/docs`)).status, 200, 'Swagger UI under the prefix')
  })

  await t.test('README and docs/testing.md: test firmware against it', async (t) => {
    for (const file of ['README.md', 'docs/testing.md']) {
      const result = await tsx(t, block(file, 'rig.simulateDevice(\'led-1\''), dir, `firmware-${file.replace(/\W/g, '-')}`)
      t.match(result.out, /^completed \{ on: true \}/, `${file}: the command was answered`)
    }
  })

  await t.test('docs/plugins.md: register, list, update and delete a plugin', async (t) => {
    const env = { TOKEN: accessToken }
    const created = await bash(t, block('docs/plugins.md', 'curl -X POST "http://localhost:8080/api/rest/plugin?'), dir, hostSubstitutions, env)
    const registration = JSON.parse(created.out) as { topicName: string, proxyEndpoint: string }
    t.match(registration, { topicName: /^plugin_topic_/, proxyEndpoint: `ws://127.0.0.1:${port}/api/plugin/proxy` })
    const listed = await bash(t, block('docs/plugins.md', 'plugin/count?namePattern'), dir, hostSubstitutions, env)
    // status=0 lists ACTIVE plugins: none yet (a new plugin is CREATED); the count matches the name.
    t.equal(listed.out, '[]{"count":1}')
    const withTopic = { ...env, TOPIC: registration.topicName }
    await bash(t, block('docs/plugins.md', '# activate'), dir, hostSubstitutions, withTopic)
    const plugins = await (await fetch(`${origin}/api/rest/plugin`, { headers: admin })).json() as Array<{ name: string, parameters: unknown }>
    t.match(plugins, [{ name: 'Logger', parameters: { retention: 7 } }], 'the updates took effect')
    await bash(t, block('docs/plugins.md', 'curl -X DELETE'), dir, hostSubstitutions, withTopic)
    t.same(await (await fetch(`${origin}/api/rest/plugin`, { headers: admin })).json(), [], 'deleted')
  })

  await t.test('docs/testing.md: devicehub simulate', async (t) => {
    const result = await bash(t, block('docs/testing.md', 'npx devicehub simulate'), dir,
      [...hostSubstitutions, ['--password ...', `--password ${PASSWORD}`], ['--duration 5m', '--duration 2s']])
    t.match(JSON.parse(result.out.trim().split('\n').pop()!), { devices: 100, errors: 0 })
  })

  // Last: it changes the admin's password.
  await t.test('docs/security.md: user administration on the database', async (t) => {
    const result = await bash(t, block('docs/security.md', 'devicehub user list'), dir, [], { DEVICEHUB_DB: './devicehub.db' })
    t.match(result.out, /^1\tdhadmin\tadmin\tactive\t/m, 'list')
    t.match(result.out, /'dhadmin' is active \(was active\)/, 'unlock')
    t.match(result.out, /password of 'dhadmin' changed\npassword: \S+/, 'passwd')
    t.match(result.out, /created admin 'ops' \(id \d+\)/, 'create')
  })

  server.kill('SIGTERM')
})
