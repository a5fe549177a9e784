/**
 * The composition of the core: every domain service over one store and one bus. Framework-free;
 * the HTTP adapter, the CLI and embedding code all call these services.
 */
import type { AuthService, TokenLifetimes } from './auth/auth-service.js'
import { DEFAULT_TOKEN_LIFETIMES, createAuthService } from './auth/auth-service.js'
import { createJwtCodec } from './auth/jwt.js'
import type { JwtKeyDerivation } from './auth/jwt-key.js'
import { jwtKeyWarning } from './auth/jwt-key.js'
import type { BootstrapResult } from './bootstrap.js'
import { checkBootstrapOptions, ensureInitialData, resolveJwtSecret } from './bootstrap.js'
import type { CommandService } from './commands/command-service.js'
import { createCommandService } from './commands/command-service.js'
import type { ConfigurationService } from './configuration/configuration-service.js'
import { createConfigurationService } from './configuration/configuration-service.js'
import type { Limits, ServiceContext } from './context.js'
import type { DeviceTypeService } from './device-types/device-type-service.js'
import { createDeviceTypeService } from './device-types/device-type-service.js'
import type { HistoryPurger } from './devices/history-purge.js'
import { createHistoryPurger } from './devices/history-purge.js'
import type { DeviceService } from './devices/device-service.js'
import { createDeviceService } from './devices/device-service.js'
import type { ClusterInfo, InfoService } from './info/info-service.js'
import { createInfoService } from './info/info-service.js'
import type { NetworkService } from './networks/network-service.js'
import { createNetworkService } from './networks/network-service.js'
import type { NotificationService } from './notifications/notification-service.js'
import { createNotificationService } from './notifications/notification-service.js'
import type { PluginDelivery } from './plugins/plugin-delivery.js'
import { createPluginDelivery } from './plugins/plugin-delivery.js'
import type { PluginService } from './plugins/plugin-service.js'
import { createPluginService } from './plugins/plugin-service.js'
import type { HealthReport } from './operations/health.js'
import { checkHealth } from './operations/health.js'
import { createInitialisation } from './operations/initialisation.js'
import type { HubStats } from './operations/hub-stats.js'
import { createStatsRecorder } from './operations/hub-stats.js'
import type { Logger, Store } from './ports.js'
import type { Presence, PresenceSettings } from './presence/presence-service.js'
import { createPresence } from './presence/presence-service.js'
import { silentLogger } from './ports.js'
import type { Bus } from './realtime/bus.js'
import { createWaiterRegistry } from './realtime/cancellation.js'
import { createMemoryDoorbell } from './realtime/memory-doorbell.js'
import type { MessageLog } from './realtime/message-log.js'
import { createMessageLog } from './realtime/message-log.js'
import type { LogOrdering } from './realtime/log-ordering.js'
import type { Router } from './realtime/router.js'
import { createRouter } from './realtime/router.js'
import { createUnansweredCommands } from './realtime/unanswered-commands.js'
import type { RetentionPruner } from './realtime/retention.js'
import { DEFAULT_RETENTION_MS, createRetentionPruner } from './realtime/retention.js'
import type { Clock } from './time.js'
import { systemClock } from './time.js'
import type { UserService } from './users/user-service.js'
import { createUserService } from './users/user-service.js'

export interface DeviceHubOptions {
  store: Store
  /**
   * The bus events travel on: defaults to the in-process memory bus; every instance over one
   * PostgreSQL database needs the PostgreSQL bus (`createPostgresDoorbell`), with `ordering`.
   */
  bus?: Bus
  /**
   * Where the store's message writes ride `bus` and commit out of stamp order (PostgreSQL with
   * its bus): the log's order, built by the dialect over the store and `bus`
   * (`postgresOrdering(store, bus)` from `devicehub/postgres`). Without it writes publish on
   * `bus` once they committed (inside a caller's transaction: at its commit) and the store's
   * high-water mark is the mark.
   */
  ordering?: LogOrdering
  /** Tests only (D2): no setting shifts the clock of a running server. */
  clock?: Clock
  logger?: Logger
  /** The JWT secret (D3); when absent the stored one is used, or one is generated and stored. */
  jwtSecret?: string
  /**
   * How the HMAC key comes from the secret (jwt-key.ts): `auto` (default) keeps DeviceHive's
   * key for a secret in canonical Base64 and uses any other secret whole; `devicehive` always
   * uses DeviceHive's derivation (to verify tokens DeviceHive minted with, e.g., `devicehive`).
   */
  jwtKeyDerivation?: JwtKeyDerivation
  tokenLifetimes?: Partial<TokenLifetimes>
  /**
   * The admin created on the first start (D4), with the network and device type 1. Without a
   * password one is generated and returned once in `hub.bootstrap.generatedPassword`.
   */
  admin?: { login?: string, password?: string }
  /**
   * Do not create the first-start data now; `hub.initialise()` does. `startServer()` uses this
   * so that a start that fails (a busy port) creates no admin whose password nobody saw. The
   * HTTP adapter holds requests until then (10 s at most, then 503): call `initialise()`.
   */
  deferBootstrap?: boolean
  limits?: Partial<Limits>
  /** Strings for `/info/config/cluster`. */
  cluster?: Partial<ClusterInfo>
  /** R8: how long commands and notifications are kept, in ms (default 30 days). */
  retentionMs?: number
  /** Device presence: the online window and the opt-in `$device-online` / `$device-offline` notifications. */
  presence?: Partial<PresenceSettings>
}

export interface DeviceHub {
  readonly store: Store
  /**
   * The bus in log order: the ordering's where there is one (PostgreSQL: the bus given does not
   * deliver this hub's own writes, which the ordering has from their statements), else the bus
   * given (or the memory bus). Listeners that wait for messages use `router`.
   */
  readonly bus: Bus
  /** The one write path of messages, and the mark readers take. */
  readonly log: MessageLog
  /** The routing index of this hub's waiters (streams, long polls) over the bus, in log order. */
  readonly router: Router
  readonly clock: Clock
  readonly logger: Logger
  readonly limits: Limits
  /**
   * What the first-start bootstrap did on this start. On the start that created the admin with
   * a generated password, `generatedPassword` holds it: show it to the operator, it is stored
   * only hashed.
   */
  readonly bootstrap: BootstrapResult
  /** What the operator must hear about at start (a JWT secret too short to be safe); also logged as warnings. */
  readonly startupWarnings: readonly string[]
  /** Runs the first-start bootstrap if `deferBootstrap` postponed it (idempotent); returns `bootstrap`. */
  initialise(): Promise<BootstrapResult>
  /** True once the first-start data exists (at once, unless `deferBootstrap` postponed it). */
  readonly initialised: boolean
  /**
   * Resolves once the first-start data exists; rejects when the bootstrap failed or the hub
   * closed first. The HTTP adapter holds requests on it, so none is answered before then.
   */
  whenInitialised(): Promise<void>
  /** Readiness: the store answers, the bus is connected, the hub is not closing. */
  health(): Promise<HealthReport>
  /** Counters for monitoring (parked polls, messages written, retention). */
  readonly stats: HubStats
  readonly tokens: AuthService
  readonly info: InfoService
  readonly configuration: ConfigurationService
  readonly users: UserService
  readonly networks: NetworkService
  readonly deviceTypes: DeviceTypeService
  readonly devices: DeviceService
  readonly commands: CommandService
  readonly notifications: NotificationService
  readonly plugins: PluginService
  /** Plugin message delivery (the plugin proxy's core): connections, subscriptions, status. */
  readonly pluginDelivery: PluginDelivery
  /** The background pruning of old commands and notifications (R8). */
  readonly retention: RetentionPruner
  /** Device presence (`lastSeen`, `online`); real-time adapters report open device streams to it. */
  readonly presence: Presence
  /** Removes the histories of deleted devices in background batches. */
  readonly purger: HistoryPurger
  /** Answers every pending long poll with `[]` now (before a server closes). Idempotent. */
  releaseWaiters(): void
  /** Releases the waiters, stops the pruner, closes the bus and the store. Idempotent. */
  close(): Promise<void>
}

/**
 * Builds the core over a migrated store: resolves the JWT secret, runs the first-start
 * bootstrap, and wires every service.
 *
 * @example
 * const store = await openSqliteStore(':memory:')
 * const hub = await createDeviceHub({ store, admin: { password: 'secret-password' } })
 * const { accessToken } = await hub.tokens.login('dhadmin', 'secret-password')
 */
export async function createDeviceHub (options: DeviceHubOptions): Promise<DeviceHub> {
  const { store } = options
  checkBootstrapOptions({ adminLogin: options.admin?.login, adminPassword: options.admin?.password })
  const clock = options.clock ?? systemClock
  const logger = options.logger ?? silentLogger
  if (options.ordering !== undefined && options.bus === undefined) {
    throw new Error('createDeviceHub: `ordering` orders the events of `bus`; give the bus it was built over')
  }
  const bus = options.bus ?? createMemoryDoorbell()
  // Readiness: a bus with a connection of its own (PostgreSQL's LISTEN) says when it drops and
  // comes back; the memory bus never does, so it is always up.
  let busConnected = true
  bus.subscribe((event) => {
    if (event.kind === 'connection') busConnected = event.up
  })
  const limits: Limits = { maxTake: 10_000, ...options.limits }
  const lifetimes = { ...DEFAULT_TOKEN_LIFETIMES, ...options.tokenLifetimes }
  const secret = await resolveJwtSecret(store, options.jwtSecret)
  const auth = createAuthService({ store, jwt: createJwtCodec(secret, options.jwtKeyDerivation), clock, lifetimes, bus })
  const startupWarnings = [jwtKeyWarning(secret, options.jwtKeyDerivation)].filter((w) => w !== undefined)
  for (const warning of startupWarnings) logger.warn(warning)
  const runBootstrap = (): Promise<BootstrapResult> => ensureInitialData(
    store, { adminLogin: options.admin?.login, adminPassword: options.admin?.password }
  )
  const initialisation = await createInitialisation(runBootstrap, {
    deferred: options.deferBootstrap === true,
    placeholder: { created: false, adminLogin: (options.admin?.login ?? 'dhadmin').trim() }
  })
  const waiters = createWaiterRegistry()
  // Writes that ride the statement on PostgreSQL commit out of stamp order: the dialect's
  // ordering puts their events back in order before any listener hears them, and keeps the mark.
  const ordered = options.ordering === undefined ? undefined : await options.ordering({ logger })
  const recorder = createStatsRecorder(() => waiters.size, ordered?.stats, auth.loginStats)
  // Listeners hear the bus in log order; writers append to the log.
  const orderedBus = ordered?.bus ?? bus
  const log = createMessageLog({
    store, bus: orderedBus, clock, channel: ordered?.channel, order: ordered?.order, onWritten: recorder.written
  })
  // The log knows nothing per device below its first mark (`MessageLog.knownAfter`): take it now.
  await log.mark()
  // Before the router, so every listener it serves reads past what the cache held: a `revoke` or
  // `resync` may stand for rows another instance changed (rights, assignments) without telling
  // this store.
  orderedBus.subscribe((event) => {
    if (event.kind === 'stale-reads' || event.kind === 'revoke' || event.kind === 'resync') store.forgetReads()
  })
  // Every write of those rows tells the other instances at its commit: their read caches then
  // serve nothing older than it, whatever their age (see docs/architecture.md, "Read cache").
  const unwatchOwn = store.watchOwnWrites((tx) => orderedBus.publish({ kind: 'stale-reads' }, tx).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not tell other instances of a write to users, devices or their scopes')
    throw error
  }))
  // Another process's commits ring no bell (the CLI's `user passwd` on this SQLite file): a
  // resync makes every stream check its rights and read the log again, as after a gap.
  const unwatchOthers = store.watchOtherWriters(() => {
    orderedBus.publish({ kind: 'resync' })
      .catch((error: unknown) => logger.warn({ err: error }, 'resync after another process wrote failed'))
  })
  // Before the router: it must have heard every event a stream was handed (unanswered-commands.ts).
  const unansweredCommands = createUnansweredCommands()
  orderedBus.subscribe(unansweredCommands.hear)
  const router = createRouter(orderedBus)
  const presence = createPresence({ store, log, clock, logger }, options.presence)
  const purger = createHistoryPurger({ store, logger })
  // Histories queued before this start (a crash mid-purge, migration 0003) go now.
  purger.kick()
  const ctx: ServiceContext = {
    store, bus: orderedBus, log, router, unansweredCommands, clock, logger, limits, auth, waiters, presence, purger
  }
  const retention = createRetentionPruner({
    store, clock, logger, retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS, onPass: recorder.pruned, onFailure: recorder.pruneFailed
  })
  retention.start()
  presence.start()
  const pluginDelivery = createPluginDelivery(ctx)
  let closing: Promise<void> | undefined
  return {
    store,
    bus: orderedBus,
    log,
    router,
    clock,
    logger,
    limits,
    get bootstrap () {
      return initialisation.result
    },
    startupWarnings,
    initialise: () => initialisation.run(),
    get initialised () {
      return initialisation.done
    },
    whenInitialised: () => initialisation.settled(),
    health: () => checkHealth({
      store,
      busConnected: () => busConnected,
      closing: () => closing !== undefined || waiters.closed,
      initialised: () => initialisation.done
    }),
    stats: recorder.stats,
    tokens: auth,
    info: createInfoService({ clock, cluster: options.cluster, describeStore: () => `storage: ${store.dialect}` }),
    configuration: createConfigurationService(store),
    users: createUserService(ctx),
    networks: createNetworkService(ctx),
    deviceTypes: createDeviceTypeService(ctx),
    devices: createDeviceService(ctx),
    commands: createCommandService(ctx),
    notifications: createNotificationService(ctx),
    plugins: createPluginService(ctx, pluginDelivery),
    pluginDelivery,
    retention,
    presence,
    purger,
    releaseWaiters () {
      waiters.releaseAll()
    },
    close () {
      closing ??= (async () => {
        initialisation.abandon()
        unwatchOthers()
        unwatchOwn()
        waiters.releaseAll()
        pluginDelivery.close()
        await retention.stop()
        await presence.stop()
        await purger.stop()
        await orderedBus.close()
        await store.close()
      })()
      return closing
    }
  }
}
