/**
 * The `devicehub` command line: the composition root and the only reader of argv and
 * process.env. `serve` starts the server, `migrate` migrates a database, `token` prints tokens.
 */
import { Command, InvalidArgumentError, Option } from 'commander'
import { createDeviceHub } from '../core/devicehub.js'
import { SERVER_VERSION } from '../core/version.js'
import { describeLocation, openStore } from '../store/open-store.js'
import { migrateStore } from './migrate.js'
import { runServe } from './serve.js'
import { parseDuration } from './duration.js'

export interface CliIo {
  out: (line: string) => void
  err: (line: string) => void
  env: NodeJS.ProcessEnv
}

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env
}

function integer (min: number, max: number) {
  return (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`)
    return n
  }
}

function duration (value: string): number {
  try {
    return parseDuration(value)
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message)
  }
}

const dbOption = (): Option => new Option('--db <location>', 'SQLite file, :memory:, or a postgres:// URL')
  .env('DEVICEHUB_DB').default('./devicehub.db')
const secretOption = (): Option => new Option('--jwt-secret <secret>', 'JWT signing secret (else stored in the database; also read from JWT_SECRET)')
  .env('DEVICEHUB_JWT_SECRET')

/**
 * @example
 * await createCli().parseAsync(['node', 'devicehub', 'serve', '--port', '0'])
 */
export function createCli (io: CliIo = defaultIo): Command {
  const program = new Command('devicehub')
    .description('DeviceHive-compatible device-management server')
    .version(SERVER_VERSION)
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })

  program.command('serve')
    .description('start the REST server (SQLite by default; prints its URL and how to get a token)')
    .addOption(new Option('--port <port>', 'TCP port; 0 picks a free one').env('DEVICEHUB_PORT').default(8080).argParser(integer(0, 65535)))
    .addOption(new Option('--host <host>', 'interface to listen on; 0.0.0.0 for devices on your network').env('DEVICEHUB_HOST').default('127.0.0.1'))
    .addOption(new Option('--base-path <path>', 'REST base path').env('DEVICEHUB_BASE_PATH').default('/api/rest'))
    .addOption(dbOption())
    .addOption(secretOption())
    .addOption(new Option('--admin-login <login>', 'login of the admin created on first start').env('DEVICEHUB_ADMIN_LOGIN').default('dhadmin'))
    .addOption(new Option('--admin-password <password>', 'password of the admin created on first start (else generated and printed once)').env('DEVICEHUB_ADMIN_PASSWORD'))
    .addOption(new Option('--access-token-lifetime <duration>', 'access token lifetime (e.g. 30m)').env('DEVICEHUB_ACCESS_TOKEN_LIFETIME').default(30 * 60_000, '30m').argParser(duration))
    .addOption(new Option('--refresh-token-lifetime <duration>', 'refresh token lifetime (e.g. 182d)').env('DEVICEHUB_REFRESH_TOKEN_LIFETIME').default(182 * 86_400_000, '182d').argParser(duration))
    .addOption(new Option('--retention <duration>', 'how long commands and notifications are kept (e.g. 30d)').env('DEVICEHUB_RETENTION').default(30 * 86_400_000, '30d').argParser(duration))
    .addOption(new Option('--max-take <n>', 'largest page a list returns (R10)').env('DEVICEHUB_MAX_TAKE').default(10_000).argParser(integer(1, 1_000_000)))
    .addOption(new Option('--body-limit <bytes>', 'largest request body').env('DEVICEHUB_BODY_LIMIT').default(1024 * 1024).argParser(integer(1024, 64 * 1024 * 1024)))
    .addOption(new Option('--log-level <level>', 'log level').env('DEVICEHUB_LOG_LEVEL').default('info')
      .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .action(async (options) => {
      // An empty environment variable counts as not set.
      await runServe({ ...options, adminPassword: options.adminPassword || undefined, jwtSecret: options.jwtSecret || io.env.JWT_SECRET || undefined }, io)
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
    .action(async (options: { login: string, db: string, jwtSecret?: string }) => {
      const store = await openStore(options.db)
      const hub = await createDeviceHub({ store, jwtSecret: options.jwtSecret || io.env.JWT_SECRET || undefined })
      try {
        if (hub.bootstrap.generatedPassword !== undefined) {
          io.err(`Initialised ${describeLocation(options.db)}: admin '${hub.bootstrap.adminLogin}' password: ${hub.bootstrap.generatedPassword}`)
        }
        const user = await store.users.findByLogin(options.login)
        if (user === undefined) throw new Error(`No user with login '${options.login}'`)
        io.out(JSON.stringify(await hub.tokens.issueForUser(user.id)))
      } finally {
        await hub.close()
      }
    })

  return program
}
