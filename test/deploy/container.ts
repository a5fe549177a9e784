/**
 * There is no Docker engine where the tests run, so this checks the container files for the
 * basics an image build would otherwise show: stages, user, health check, wiring of compose.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { ROOT } from '../fixtures/cli.js'

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8')

t.test('Dockerfile: multi-stage, non-root, health check on readiness, runs the CLI', async (t) => {
  const dockerfile = read('Dockerfile')
  const instructions = dockerfile.split('\n').filter((line) => /^[A-Z]+\s/.test(line))
  const froms = instructions.filter((line) => line.startsWith('FROM '))
  t.ok(froms.length >= 2, 'at least two stages')
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string }, scripts: Record<string, string> }
  const engines = pkg.engines.node
  const majors = [...engines.matchAll(/\^(\d+)\./g)].map((m) => m[1])
  for (const from of froms) {
    const major = /^FROM node:(\d+)[.-]/.exec(from)?.[1]
    t.ok(major !== undefined && majors.includes(major), `base image on a supported Node line (${from}; ${engines})`)
  }
  t.not(/^FROM node:(\d+)/.exec(froms[0]!)?.[1], '20', 'not the end-of-life line')
  // Whatever the build script reads must be in the build stage before it runs.
  const build = dockerfile.slice(0, dockerfile.indexOf('npm run build'))
  for (const dir of ['lib', 'bin', 'scripts', 'console']) t.match(build, new RegExp(`^COPY ${dir} ${dir}$`, 'm'), `the build stage copies ${dir}/`)
  for (const script of pkg.scripts.build!.matchAll(/node (\S+)/g)) t.ok(build.includes(`COPY ${script[1]!.split('/')[0]}`), `the build stage has ${script[1]}`)
  t.match(dockerfile, /openSqliteStore\(':memory:'\)/, 'the build checks that the SQLite store opens')
  t.notMatch(dockerfile, /g\+\+|node-gyp|better-sqlite3/, 'nothing native is built on the image\'s line')
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.match(runtime, /^USER (?!root\b)\w+/m, 'the runtime stage runs as a non-root user')
  t.match(runtime, /^COPY --from=build /m, 'copies the build output')
  t.notMatch(runtime, /npm (ci|install)(?!.*--omit=dev)/, 'installs no dev dependencies in the runtime stage')
  t.match(runtime, /^HEALTHCHECK .*\n?.*\/health\/ready/m, 'health check on the readiness probe')
  t.match(runtime, /^EXPOSE 8080/m)
  t.match(runtime, /DEVICEHUB_HOST=0\.0\.0\.0/, 'listens beyond loopback inside the container')
  t.match(runtime, /^ENTRYPOINT \["node", "dist\/bin\/devicehub\.js"\]/m, 'node is PID 1 and gets SIGTERM')
  t.match(runtime, /^CMD \["serve"\]/m)
  t.match(dockerfile, /pg@/, 'the PostgreSQL driver is in the image')
  const ignore = read('.dockerignore').split('\n')
  for (const entry of ['node_modules', '.git', '*.db', 'dist']) t.ok(ignore.includes(entry), `.dockerignore has ${entry}`)
})

t.test('compose.yaml: PostgreSQL and two devicehub instances behind a proxy', async (t) => {
  const compose = parse(read('compose.yaml')) as {
    services: Record<string, { build?: string, image?: string, environment?: Record<string, string>, ports?: string[],
      depends_on?: Record<string, { condition: string }>, volumes?: string[], healthcheck?: unknown }>
  }
  const services = compose.services
  t.match(services.postgres, { image: /^postgres:/, healthcheck: Object })
  const instances = Object.entries(services).filter(([, service]) => service.build === '.')
  t.equal(instances.length, 2, 'two devicehub instances built from this repository')
  const secrets = new Set<string>()
  for (const [name, service] of instances) {
    t.match(service.environment?.DEVICEHUB_DB, /^postgres:\/\/.*@postgres:5432\//, `${name} uses PostgreSQL`)
    secrets.add(String(service.environment?.DEVICEHUB_JWT_SECRET))
    t.ok(service.environment?.DEVICEHUB_ADMIN_PASSWORD, `${name}: the admin password is given, not generated`)
    t.equal(service.depends_on?.postgres?.condition, 'service_healthy')
  }
  t.equal(secrets.size, 1, 'every instance shares the JWT secret')
  t.notMatch(read('compose.yaml'), /PASSWORD:\s*["']?[a-z0-9]{4,}["']?\s*$/im, 'no fixed passwords')
  const proxy = services.proxy!
  t.ok(proxy.ports?.some((port) => port.endsWith(':8080')), 'the proxy publishes the port')
  for (const [name] of instances) t.equal(proxy.depends_on?.[name]?.condition, 'service_healthy')
  const caddyfile = read('deploy/Caddyfile')
  t.ok(proxy.volumes?.some((volume) => volume.startsWith('./deploy/Caddyfile:')), 'the proxy mounts deploy/Caddyfile')
  for (const [name] of instances) t.match(caddyfile, `${name}:8080`, `the proxy balances over ${name}`)
  t.match(caddyfile, /health_uri \/api\/rest\/health\/ready/)
  t.match(caddyfile, /respond \/metrics 404/, 'metrics are not published through the proxy')
})
