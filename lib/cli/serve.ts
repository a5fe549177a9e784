/**
 * `devicehub serve`: start, print where it listens and how to log in, stop cleanly on signals.
 * Logs go to stdout (JSON lines or pretty); the banner goes to stderr, so a JSON log stream
 * never carries plain text.
 */
import { SERVER_VERSION } from '../core/version.js'
import { startServer } from '../start-server.js'
import { DEFAULT_CLOSE_GRACE_MS } from '../http/build-server.js'
import type { LogFormat } from './logger.js'
import { createLoggerOptions } from './logger.js'
import { describeLocation } from '../store/open-store.js'
import type { CliIo } from './cli-io.js'
import { checkAdminPassword, checkBasePath } from './serve-checks.js'

export interface ServeOptions {
  port: number
  host: string
  /** MQTT TCP port (default 1883); false = no listener. */
  mqttPort: number | false
  /** The port is the default one: busy, it is a warning instead of an error. */
  mqttPortIsDefault?: boolean
  basePath: string
  db: string
  jwtSecret?: string
  /** `auto` (default) or `devicehive` (DeviceHive's key derivation for any secret). */
  jwtKeyDerivation?: 'auto' | 'devicehive'
  adminLogin: string
  adminPassword?: string
  accessTokenLifetime: number
  refreshTokenLifetime: number
  maxTake: number
  /** R8: retention of commands and notifications, in ms. */
  retention: number
  bodyLimit: number
  logLevel: string
  logFormat: LogFormat
  metrics: boolean
  presenceWindow: number
  presenceNotifications: boolean
  /** False with --no-console. */
  console: boolean
  /** The public origin in the URLs the server reports (--public-url). */
  publicUrl?: string
  /** SQLite `synchronous`: normal (default) or full. */
  durability?: 'normal' | 'full'
  /** --trust-proxy: the proxies whose `X-Forwarded-For` names the client (login throttling counts per client). */
  trustProxy?: boolean | string
}

export async function runServe (options: ServeOptions, io: CliIo): Promise<void> {
  checkBasePath(options.basePath)
  checkAdminPassword(options.adminPassword)
  const server = await startServer({
    db: options.db,
    port: options.port,
    host: options.host,
    // off: no MQTT at all (neither the TCP listener nor MQTT over WebSocket).
    mqtt: options.mqttPort === false ? false : { port: options.mqttPortIsDefault === true ? undefined : options.mqttPort },
    basePath: options.basePath,
    jwtSecret: options.jwtSecret,
    jwtKeyDerivation: options.jwtKeyDerivation,
    admin: { login: options.adminLogin, password: options.adminPassword },
    tokenLifetimes: { accessMs: options.accessTokenLifetime, refreshMs: options.refreshTokenLifetime },
    limits: { maxTake: options.maxTake },
    retentionMs: options.retention,
    presence: { windowMs: options.presenceWindow, notifications: options.presenceNotifications },
    console: options.console,
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy,
    durability: options.durability,
    publicUrl: options.publicUrl,
    logger: createLoggerOptions({ level: options.logLevel, format: options.logFormat, colour: process.stdout.isTTY }),
    metrics: options.metrics
  })
  const { bootstrap } = server.hub
  const origin = new URL(server.url).origin
  const say = io.err
  say(`devicehub ${SERVER_VERSION} listening on ${server.url}`)
  say(`database: ${describeLocation(options.db)}`)
  say(`API docs: ${server.url}/docs   health: ${server.url}/health/ready${options.metrics ? `   metrics: ${origin}/metrics` : ''}`)
  if (server.consoleUrl !== undefined) say(`web console: ${server.consoleUrl}`)
  const mqtt = [server.mqttUrl, server.mqttWebSocketUrl].filter((url) => url !== undefined)
  if (mqtt.length > 0) say(`MQTT: ${mqtt.join('   ')}`)
  for (const warning of [...server.hub.startupWarnings, ...server.warnings]) say(`WARNING: ${warning}`)
  if (bootstrap.generatedPassword !== undefined) {
    say(`first start: created admin '${bootstrap.adminLogin}' with password ${bootstrap.generatedPassword}`)
    say('this password is shown only once: keep it now (lost it? devicehub user passwd)')
  }
  say('get a token:')
  say(`  curl -s -X POST ${server.url}/token -H 'Content-Type: application/json' ` +
    `-d '{"login":"${bootstrap.adminLogin}","password":"<password>"}'`)

  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) {
      io.err(`${signal} again: exiting now`)
      process.exit(1)
    }
    stopping = true
    io.err(`${signal}: closing (in-flight requests get ${DEFAULT_CLOSE_GRACE_MS / 1000} s to finish)`)
    server.close().then(() => {
      io.err('closed')
      process.exit(0)
    }, (error: unknown) => {
      io.err(`error while closing: ${String(error)}`)
      process.exit(1)
    })
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
}
