/** `devicehub serve`: start, print where it listens and how to log in, stop cleanly on signals. */
import { SERVER_VERSION } from '../core/version.js'
import { startServer } from '../start-server.js'
import { keepYoungGenerationSmall } from './memory-tuning.js'
import { describeLocation } from '../store/open-store.js'
import type { CliIo } from './create-cli.js'

export interface ServeOptions {
  port: number
  host: string
  basePath: string
  db: string
  jwtSecret?: string
  adminLogin: string
  adminPassword?: string
  accessTokenLifetime: number
  refreshTokenLifetime: number
  maxTake: number
  /** R8: retention of commands and notifications, in ms. */
  retention: number
  bodyLimit: number
  logLevel: string
}

export async function runServe (options: ServeOptions, io: CliIo): Promise<void> {
  keepYoungGenerationSmall()
  const server = await startServer({
    db: options.db,
    port: options.port,
    host: options.host,
    basePath: options.basePath,
    jwtSecret: options.jwtSecret,
    admin: { login: options.adminLogin, password: options.adminPassword },
    tokenLifetimes: { accessMs: options.accessTokenLifetime, refreshMs: options.refreshTokenLifetime },
    limits: { maxTake: options.maxTake },
    retentionMs: options.retention,
    bodyLimit: options.bodyLimit,
    logger: options.logLevel === 'silent' ? false : { level: options.logLevel }
  })
  const { bootstrap } = server.hub
  io.out(`devicehub ${SERVER_VERSION} listening on ${server.url}`)
  io.out(`database: ${describeLocation(options.db)}`)
  if (bootstrap.generatedPassword !== undefined) {
    io.out(`first start: created admin '${bootstrap.adminLogin}' with password ${bootstrap.generatedPassword}`)
    io.out('this password is shown only once: keep it now (or restart an empty database with --admin-password)')
  }
  io.out('get a token:')
  io.out(`  curl -s -X POST ${server.url}/token -H 'Content-Type: application/json' -d '{"login":"${bootstrap.adminLogin}","password":"<password>"}'`)

  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) {
      io.err(`${signal} again: exiting now`)
      process.exit(1)
    }
    stopping = true
    io.out(`${signal}: closing (in-flight requests finish first)`)
    server.close().then(() => {
      io.out('closed')
      process.exit(0)
    }, (error: unknown) => {
      io.err(`error while closing: ${String(error)}`)
      process.exit(1)
    })
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
}
