/**
 * The `devicehub` command line: the composition root and the only reader of argv and
 * process.env. `serve` starts the server, `migrate` migrates a database, `token` prints tokens.
 */
import { Command, InvalidArgumentError, Option } from 'commander'
import { createDeviceHub } from '../core/devicehub.js'
import { SERVER_VERSION } from '../core/version.js'
import { parsePublicUrl } from '../http/public-origin.js'
import { describeLocation, openStore } from '../store/open-store.js'
import { migrateStore } from './migrate.js'
import { parseDuration } from './duration.js'
import { runSimulation } from './simulate.js'
import { registerUserCommands } from './user.js'
import type { CliIo } from './cli-io.js'
import { defaultIo } from './cli-io.js'

export type { CliIo } from './cli-io.js'

function integer (min: number, max: number) {
  return (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`)
    return n
  }
}

/**
 * `--trust-proxy`: addresses and CIDR ranges (Fastify's `trustProxy`), or true for any (only when
 * nothing reaches devicehub past the proxy).
 */
function trustProxy (value: string): boolean | string {
  const text = value.trim()
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true'
  if (!/^[\w.:/,\s%-]+$/.test(text)) throw new InvalidArgumentError('expected addresses or CIDR ranges (comma-separated), or true')
  return text
}

/** `--mqtt-port`: a port (0 picks a free one), or off / false / none for no MQTT listener. */
function mqttPort (value: string): number | false {
  if (/^(off|false|none|no)$/i.test(value.trim())) return false
  // An empty DEVICEHUB_MQTT_PORT counts as not set (see the action).
  if (value.trim() === '') return 1883
  return integer(0, 65535)(value.trim())
}

function duration (value: string): number {
  try {
    return parseDuration(value)
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message)
  }
}

function publicUrl (value: string): string {
  try {
    return parsePublicUrl(value)
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message)
  }
}

function presenceWindow (value: string): number {
  const ms = duration(value)
  if (ms < 1000) throw new InvalidArgumentError('the presence window is at least 1s')
  return ms
}

const dbOption = (): Option => new Option('--db <location>', 'SQLite file, :memory:, or a postgres:// URL')
  .env('DEVICEHUB_DB').default('./devicehub.db')
const secretOption = (): Option => new Option('--jwt-secret <secret>',
  'JWT signing secret (else stored in the database; also read from JWT_SECRET)')
  .env('DEVICEHUB_JWT_SECRET')
const keyDerivationOption = (): Option => new Option('--jwt-key-derivation <mode>',
  'auto = DeviceHive\'s key for a canonical Base64 secret, else the whole secret; devicehive = DeviceHive\'s for any secret ' +
  '(to verify tokens DeviceHive minted with a secret such as devicehive)')
  .env('DEVICEHUB_JWT_KEY_DERIVATION').choices(['auto', 'devicehive']).default('auto')

/**
 * @example
 * await createCli().parseAsync(['node', 'devicehub', 'serve', '--port', '0'])
 */
export function createCli (io: CliIo = defaultIo): Command {
  const program = new Command('devicehub')
    .description('DeviceHive-compatible device-management server')
    .version(SERVER_VERSION)
    // The one-line error stays visible: a hint, not the whole help, follows it.
    .showHelpAfterError("(add --help for the commands and their flags)")
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })

  program.command('serve')
    .description('start the REST server (SQLite by default; prints its URL and how to get a token)')
    .addOption(new Option('--port <port>', 'TCP port; 0 picks a free one').env('DEVICEHUB_PORT').default(8080).argParser(integer(0, 65535)))
    .addOption(new Option('--host <host>', 'interface to listen on; 0.0.0.0 for devices on your network')
      .env('DEVICEHUB_HOST').default('127.0.0.1'))
    .addOption(new Option('--mqtt-port <port>', 'MQTT (DeviceHive\'s MQTT protocol) TCP port; 0 picks a free one, off = no MQTT at all ' +
      '(else also MQTT over WebSocket at /mqtt of the HTTP port); a busy default port is only a warning')
      .env('DEVICEHUB_MQTT_PORT').default(1883).argParser(mqttPort))
    .addOption(new Option('--base-path <path>', 'REST base path (a leading / is added)').env('DEVICEHUB_BASE_PATH').default('/api/rest'))
    .addOption(dbOption())
    .addOption(secretOption())
    .addOption(keyDerivationOption())
    .addOption(new Option('--admin-login <login>', 'login of the admin created on first start')
      .env('DEVICEHUB_ADMIN_LOGIN').default('dhadmin'))
    .addOption(new Option('--admin-password <password>', 'password of the admin created on first start (else generated and printed once)')
      .env('DEVICEHUB_ADMIN_PASSWORD'))
    .addOption(new Option('--access-token-lifetime <duration>', 'access token lifetime, with a unit: ms, s, m, h or d')
      .env('DEVICEHUB_ACCESS_TOKEN_LIFETIME').default(30 * 60_000, '30m').argParser(duration))
    .addOption(new Option('--refresh-token-lifetime <duration>', 'refresh token lifetime, with a unit: ms, s, m, h or d')
      .env('DEVICEHUB_REFRESH_TOKEN_LIFETIME').default(182 * 86_400_000, '182d').argParser(duration))
    .addOption(new Option('--retention <duration>', 'how long commands and notifications are kept, with a unit: ms, s, m, h or d')
      .env('DEVICEHUB_RETENTION').default(30 * 86_400_000, '30d').argParser(duration))
    .addOption(new Option('--presence-window <duration>', 'a device seen within this window is online (at least 1s)')
      .env('DEVICEHUB_PRESENCE_WINDOW').default(60_000, '60s').argParser(presenceWindow))
    .addOption(new Option('--presence-notifications', 'send $device-online / $device-offline notifications')
      .env('DEVICEHUB_PRESENCE_NOTIFICATIONS').default(false))
    .addOption(new Option('--no-console', 'do not serve the web console at <context>/console').env('DEVICEHUB_NO_CONSOLE'))
    .addOption(new Option('--max-take <n>', 'largest page a list returns (a larger take is capped)')
      .env('DEVICEHUB_MAX_TAKE').default(10_000).argParser(integer(1, 1_000_000)))
    .addOption(new Option('--durability <mode>',
      'full = acknowledged writes survive a power failure (slower writes); normal = they survive a crash of devicehub')
      .env('DEVICEHUB_DURABILITY').choices(['normal', 'full'])
      .default(undefined, 'normal on SQLite, the server\'s setting (full) on PostgreSQL'))
    .addOption(new Option('--public-url <url>', 'the origin clients use, e.g. https://iot.example.com: it starts the WebSocket ' +
      'and plugin proxy URLs the server reports (default: the address each client connected to)')
      .env('DEVICEHUB_PUBLIC_URL').argParser(publicUrl))
    .addOption(new Option('--body-limit <bytes>', 'largest request body, in bytes')
      .env('DEVICEHUB_BODY_LIMIT').default(1024 * 1024).argParser(integer(1024, 64 * 1024 * 1024)))
    .addOption(new Option('--trust-proxy <proxies>', 'behind a reverse proxy: its addresses or CIDR ranges (comma-separated), ' +
      'whose X-Forwarded-For then names the client (login throttling counts per client)')
      .env('DEVICEHUB_TRUST_PROXY').argParser(trustProxy))
    .addOption(new Option('--log-level <level>', 'log level').env('DEVICEHUB_LOG_LEVEL').default('info')
      .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .addOption(new Option('--log-format <format>', 'pretty (one readable line per record) or json (JSON lines)')
      .env('DEVICEHUB_LOG_FORMAT').default(undefined, 'pretty in a terminal, else json').choices(['pretty', 'json']))
    // Not .env(): commander would turn DEVICEHUB_METRICS=false into true (any value counts).
    .addOption(new Option('--metrics', 'serve Prometheus metrics at GET /metrics (no authentication: keep it internal) ' +
      '(env: DEVICEHUB_METRICS=true)'))
    .action(async (options, command: Command) => {
      // Loaded here: the HTTP and MQTT servers take most of a second to load, which every other
      // command (`token`, `user`, `--version`) would pay for nothing.
      const { runServe } = await import('./serve.js')
      // An empty environment variable counts as not set.
      await runServe({
        ...options,
        // The default port may be taken (by another broker): only a port the operator chose must be free.
        mqttPortIsDefault: command.getOptionValueSource('mqttPort') === 'default' || io.env.DEVICEHUB_MQTT_PORT?.trim() === '',
        logFormat: options.logFormat ?? (process.stdout.isTTY ? 'pretty' : 'json'),
        metrics: options.metrics === true || /^(1|true|yes|on)$/i.test(io.env.DEVICEHUB_METRICS ?? ''),
        adminPassword: options.adminPassword || undefined,
        jwtSecret: options.jwtSecret || io.env.JWT_SECRET || undefined
      }, io)
    })

  program.command('migrate')
    .description('apply pending database migrations and exit')
    .addOption(dbOption())
    .action(async (options: { db: string }) => {
      await migrateStore(options.db, io)
    })

  program.command('token')
    .description('print an access and a refresh token for a user (for scripts)')
    .requiredOption('--login <login>', 'the user\'s login')
    .addOption(dbOption())
    .addOption(secretOption())
    .addOption(keyDerivationOption())
    .action(async (options: { login: string, db: string, jwtSecret?: string, jwtKeyDerivation: 'auto' | 'devicehive' }) => {
      // A typo in --db must not create a database with a fresh admin.
      const store = await openStore(options.db, { mustExist: true })
      const hub = await createDeviceHub({
        store, jwtSecret: options.jwtSecret || io.env.JWT_SECRET || undefined, jwtKeyDerivation: options.jwtKeyDerivation
      })
      try {
        if (hub.bootstrap.generatedPassword !== undefined) {
          const { adminLogin, generatedPassword } = hub.bootstrap
          io.err(`Initialised ${describeLocation(options.db)}: admin '${adminLogin}' password: ${generatedPassword}`)
        }
        const user = await store.users.findByLogin(options.login)
        if (user === undefined) throw new Error(`No user with login '${options.login}'`)
        io.out(JSON.stringify(await hub.tokens.issueForUser(user.id)))
      } finally {
        await hub.close()
      }
    })

  registerUserCommands(program, io, dbOption)

  program.command('simulate')
    .description('run simulated devices against a DeviceHive-compatible server (load tests, demos)')
    .addOption(new Option('--url <url>', 'REST base URL of the server').env('DEVICEHUB_URL').default('http://127.0.0.1:8080/api/rest'))
    .addOption(new Option('--token <jwt>', 'access token (else --login and --password)').env('DEVICEHUB_TOKEN'))
    .addOption(new Option('--login <login>', 'login to get a token with').env('DEVICEHUB_LOGIN'))
    .addOption(new Option('--password <password>', 'password for --login').env('DEVICEHUB_PASSWORD'))
    .addOption(new Option('--devices <n>', 'number of devices').default(10).argParser(integer(1, 100_000)))
    .addOption(new Option('--rate <n>', 'notifications per second, whole fleet').default(10).argParser(integer(0, 1_000_000)))
    .addOption(new Option('--prefix <prefix>', 'device id prefix (ids are <prefix>1 ... <prefix>N)').default('sim-'))
    .addOption(new Option('--duration <duration>', 'how long to run (e.g. 30s, 5m; 0 = until Ctrl-C)')
      .default(0, 'until Ctrl-C').argParser((v) => v.trim() === '0' ? 0 : duration(v)))
    .addOption(new Option('--network-id <id>', 'network to register the devices in').argParser(integer(1, 2 ** 31 - 1)))
    .addOption(new Option('--transport <transport>', 'how devices receive commands').choices(['rest', 'websocket']).default('rest'))
    .action(async (options) => {
      const stop = new AbortController()
      const onSignal = (): void => stop.abort()
      process.once('SIGINT', onSignal).once('SIGTERM', onSignal)
      io.signal?.addEventListener('abort', onSignal)
      try {
        const summary = await runSimulation({ ...options, token: options.token || undefined }, io, stop.signal)
        io.out(JSON.stringify(summary))
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal)
      }
    })

  // `devicehub --help` lists every command's flags, not only the command names.
  const everyCommand = (command: Command): Command[] => command.commands.flatMap((sub) => [sub, ...everyCommand(sub)])
  program.addHelpText('after', () => everyCommand(program)
    .map((command) => `\n${command.helpInformation().trimEnd()}`)
    .join('\n'))

  return program
}
