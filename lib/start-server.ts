/**
 * One call from nothing to a listening server: open the store, build the core and the app,
 * listen. What `devicehub serve` and firmware test rigs use.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { TokenLifetimes } from './core/auth/auth-service.js'
import type { JwtKeyDerivation } from './core/auth/jwt-key.js'
import type { DeviceHub } from './core/devicehub.js'
import { createDeviceHub } from './core/devicehub.js'
import type { Limits } from './core/context.js'
import { buildServer, normaliseBasePath } from './http/build-server.js'
import { warmNextTick } from './next-tick-warmup.js'
import { consolePath } from './http/console.js'
import type { MetricsOptions } from './http/metrics.js'
import type { PresenceSettings } from './core/presence/presence-service.js'
import { createPostgresDoorbell } from './doorbells/postgres-doorbell.js'
import type { LogOrdering } from './core/realtime/log-ordering.js'
import type { PostgresDoorbell, PostgresDoorbellOptions } from './doorbells/postgres-doorbell.js'
import type { Durability } from './store/durability.js'
import { isPostgresUrl, openStore } from './store/open-store.js'
import { postgresOrdering } from './store/ordering/postgres-ordering.js'
import type { MqttStartOptions, startMqtt as StartMqtt } from './mqtt/mqtt-start.js'
import type { MqttServer } from './mqtt/mqtt-server.js'

export interface StartServerOptions {
  /** SQLite file path, `:memory:` (default) or a `postgres://` URL. */
  db?: string
  /** Port; 0 (default) picks a free one. */
  port?: number
  /** Default `127.0.0.1`. */
  host?: string
  basePath?: string
  jwtSecret?: string
  /** `auto` (default) or `devicehive`: see {@link DeviceHubOptions.jwtKeyDerivation}. */
  jwtKeyDerivation?: JwtKeyDerivation
  admin?: { login?: string, password?: string }
  tokenLifetimes?: Partial<TokenLifetimes>
  limits?: Partial<Limits>
  /** R8: how long commands and notifications are kept, in ms (default 30 days). */
  retentionMs?: number
  logger?: FastifyServerOptions['logger']
  bodyLimit?: number
  /** Behind a reverse proxy: whose `X-Forwarded-For` names the client (see buildServer; default none). */
  trustProxy?: FastifyServerOptions['trustProxy']
  /** Prometheus metrics at `GET /metrics` (default false; see buildServer). */
  metrics?: boolean | MetricsOptions
  /**
   * Refuse to start when another process serves the same SQLite file (default true): each
   * would wake only its own long polls. A `<file>.lock` file names the owner.
   */
  lockDatabase?: boolean
  /** Device presence: online window and opt-in `$device-online` / `$device-offline`. */
  presence?: Partial<PresenceSettings>
  /** Serve the web console at `<context>/console` (default true). */
  console?: boolean
  /**
   * `full`: acknowledged writes survive a power failure (slower writes); `normal`: they survive a
   * crash of the process. Default `normal` on SQLite, the server's setting (`full`) on PostgreSQL.
   */
  durability?: Durability
  /**
   * The public origin clients use (e.g. `https://iot.example.com`) in the URLs the server reports
   * (`webSocketServerUrl`, `proxyEndpoint`): see buildServer. Default: the address they connected to.
   */
  publicUrl?: string
  /**
   * The MQTT endpoint (docs/mqtt.md): DeviceHive's MQTT protocol on its own TCP port and over
   * WebSocket at `/mqtt` of the HTTP port. Default none (`devicehub serve` turns it on).
   */
  mqtt?: MqttStartOptions | false
  /** On PostgreSQL: the doorbell's channel, reconnect backoff and health probe (see createPostgresDoorbell). */
  doorbell?: PostgresDoorbellOptions
  /** Called with the built app before it listens: add hooks or routes (the test rig's faults do). */
  configure?: (app: FastifyInstance) => void | Promise<void>
}

export interface RunningServer {
  /** Base URL of the REST API, e.g. `http://127.0.0.1:40123/api/rest`. */
  readonly url: string
  readonly port: number
  readonly app: FastifyInstance
  readonly hub: DeviceHub
  /** The web console's URL, when it is served. */
  readonly consoleUrl: string | undefined
  /** `mqtt://host:port` of the MQTT listener, when it listens. */
  readonly mqttUrl: string | undefined
  /** `ws://host:port/mqtt`: MQTT over WebSocket, when the MQTT endpoint is on. */
  readonly mqttWebSocketUrl: string | undefined
  /** The MQTT endpoint, when it is on. */
  readonly mqtt: MqttServer | undefined
  /** On PostgreSQL: the bus between instances (its LISTEN connection's state, for monitoring and tests). */
  readonly doorbell: PostgresDoorbell | undefined
  /** What the operator should know (e.g. the default MQTT port was busy, so MQTT runs over WebSocket only). */
  readonly warnings: readonly string[]
  /** An access/refresh token pair for the admin (user 1). */
  adminTokens(): Promise<{ accessToken: string, refreshToken: string }>
  /** Readiness, as `GET {base}/health/ready` reports it. */
  health(): ReturnType<DeviceHub['health']>
  /** Stops listening (in-flight requests get `DEFAULT_CLOSE_GRACE_MS` to finish) and closes the store. */
  close(): Promise<void>
}

/**
 * @example
 * const server = await startServer({ db: ':memory:', port: 0 })
 * const { accessToken } = await server.adminTokens()
 * await fetch(`${server.url}/device`, { headers: { authorization: `Bearer ${accessToken}` } })
 * await server.close()
 */
export async function startServer (options: StartServerOptions = {}): Promise<RunningServer> {
  const location = options.db ?? ':memory:'
  const store = await openStore(location, { lock: options.lockDatabase !== false, durability: options.durability })
  let hub: DeviceHub
  let bus: PostgresDoorbell | undefined
  let ordering: LogOrdering | undefined
  try {
    // Several instances over one PostgreSQL database wake each other's long polls through
    // LISTEN/NOTIFY, and their writes, which commit out of stamp order, are put back in order;
    // one process on SQLite needs nothing more than the memory bus.
    if (isPostgresUrl(location)) {
      bus = await createPostgresDoorbell(location, options.doorbell)
      ordering = postgresOrdering(store, bus)
    }
    hub = await createDeviceHub({
      store,
      bus,
      ordering,
      jwtSecret: options.jwtSecret,
      jwtKeyDerivation: options.jwtKeyDerivation,
      admin: options.admin,
      // The admin is created once the server really listens: a start that fails (a busy port)
      // must not create an admin whose generated password nobody saw. Requests that arrive
      // before it exists wait for it (http/readiness-gate.ts).
      deferBootstrap: true,
      tokenLifetimes: options.tokenLifetimes,
      limits: options.limits,
      retentionMs: options.retentionMs,
      presence: options.presence
    })
  } catch (error) {
    await bus?.close()
    await store.close()
    throw error
  }
  const basePath = normaliseBasePath(options.basePath ?? '/api/rest')
  let mqtt: Awaited<ReturnType<typeof StartMqtt>> | undefined
  // The MQTT gauges read the endpoint made after the app (its WebSocket route needs the app).
  const metrics = options.metrics === undefined || options.metrics === false || options.mqtt === undefined || options.mqtt === false
    ? options.metrics
    : {
      ...(options.metrics === true ? {} : options.metrics),
      mqtt: { clients: () => mqtt?.server.clients ?? 0, subscriptions: () => mqtt?.server.subscriptions ?? 0 }
    }
  let app: FastifyInstance
  try {
    app = await buildServer({
      publicUrl: options.publicUrl,
      hub, basePath, logger: options.logger, bodyLimit: options.bodyLimit, trustProxy: options.trustProxy,
      metrics, console: options.console
    })
  } catch (error) {
    await hub.close()
    throw error
  }
  // The hub logs nowhere yet: say it in the server's log, where the operator looks.
  for (const warning of hub.startupWarnings) app.log.warn(warning)
  const host = options.host ?? '127.0.0.1'
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host
  let origin = ''
  let port = 0
  try {
    // Before listening: its WebSocket route must exist when the app is ready.
    if (options.mqtt !== undefined && options.mqtt !== false) {
      // Loaded only when asked for: aedes and the MQTT layer are memory a server without MQTT need not hold.
      const { startMqtt } = await import('./mqtt/mqtt-start.js')
      mqtt = await startMqtt(app, hub, options.mqtt, { host, restServerUrl: () => `${options.publicUrl ?? origin}${basePath}` })
    }
    await options.configure?.(app)
    await warmNextTick()
    await app.listen({ port: options.port ?? 0, host })
    const address = app.server.address()
    port = typeof address === 'object' && address !== null ? address.port : options.port ?? 0
    origin = `http://${urlHost}:${port}`
    // After HTTP, before the first-start data: a busy chosen MQTT port fails the start like a busy HTTP port.
    await mqtt?.listen()
    await hub.initialise()
  } catch (error) {
    await app.close()
    throw error
  }
  return {
    url: `${origin}${basePath}`,
    consoleUrl: options.console === false ? undefined : `${origin}${consolePath(basePath)}`,
    mqttUrl: mqtt?.url(),
    mqttWebSocketUrl: mqtt?.webSocketPath === undefined ? undefined : `ws://${urlHost}:${port}${mqtt.webSocketPath}`,
    mqtt: mqtt?.server,
    doorbell: bus,
    warnings: mqtt?.warnings ?? [],
    port,
    app,
    hub,
    adminTokens: () => hub.tokens.issueForUser(1),
    health: () => hub.health(),
    close: () => app.close()
  }
}

