/**
 * The composition of the core: every domain service over one store and one hub. Framework-free;
 * the HTTP adapter, the CLI and embedding code all call these services.
 */
import type { AuthService, TokenLifetimes } from './auth/auth-service.js'
import { DEFAULT_TOKEN_LIFETIMES, createAuthService } from './auth/auth-service.js'
import { createJwtCodec } from './auth/jwt.js'
import type { BootstrapResult } from './bootstrap.js'
import { ensureInitialData, resolveJwtSecret } from './bootstrap.js'
import type { CommandService } from './commands/command-service.js'
import { createCommandService } from './commands/command-service.js'
import type { ConfigurationService } from './configuration/configuration-service.js'
import { createConfigurationService } from './configuration/configuration-service.js'
import type { Limits, ServiceContext } from './context.js'
import type { DeviceTypeService } from './device-types/device-type-service.js'
import { createDeviceTypeService } from './device-types/device-type-service.js'
import type { DeviceService } from './devices/device-service.js'
import { createDeviceService } from './devices/device-service.js'
import type { ClusterInfo, InfoService } from './info/info-service.js'
import { createInfoService } from './info/info-service.js'
import type { NetworkService } from './networks/network-service.js'
import { createNetworkService } from './networks/network-service.js'
import type { NotificationService } from './notifications/notification-service.js'
import { createNotificationService } from './notifications/notification-service.js'
import type { PluginService } from './plugins/plugin-service.js'
import { createPluginService } from './plugins/plugin-service.js'
import type { Logger, Store } from './ports.js'
import { silentLogger } from './ports.js'
import type { Hub } from './realtime/hub.js'
import { createWaiterRegistry } from './realtime/cancellation.js'
import { createMemoryHub } from './realtime/memory-hub.js'
import type { RetentionPruner } from './realtime/retention.js'
import { DEFAULT_RETENTION_MS, createRetentionPruner } from './realtime/retention.js'
import type { Clock } from './time.js'
import { systemClock } from './time.js'
import type { UserService } from './users/user-service.js'
import { createUserService } from './users/user-service.js'

export interface DeviceHubOptions {
  store: Store
  /** Defaults to an in-process memory hub. */
  hub?: Hub
  /** Tests only (D2): no setting shifts the clock of a running server. */
  clock?: Clock
  logger?: Logger
  /** The JWT secret (D3); when absent the stored one is used, or one is generated and stored. */
  jwtSecret?: string
  tokenLifetimes?: Partial<TokenLifetimes>
  /** First-start admin (D4). */
  admin?: { login?: string, password?: string }
  limits?: Partial<Limits>
  /** Strings for `/info/config/cluster`. */
  cluster?: Partial<ClusterInfo>
  /** R8: how long commands and notifications are kept, in ms (default 30 days). */
  retentionMs?: number
}

export interface DeviceHub {
  readonly store: Store
  readonly hub: Hub
  readonly clock: Clock
  readonly logger: Logger
  readonly limits: Limits
  /** What the first-start bootstrap did on this start. */
  readonly bootstrap: BootstrapResult
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
  /** The background pruning of old commands and notifications (R8). */
  readonly retention: RetentionPruner
  /** Answers every pending long poll with `[]` now (before a server closes). Idempotent. */
  releaseWaiters(): void
  /** Releases the waiters, stops the pruner, closes the hub and the store. Idempotent. */
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
  const clock = options.clock ?? systemClock
  const logger = options.logger ?? silentLogger
  const hub = options.hub ?? createMemoryHub()
  const limits: Limits = { maxTake: 10_000, ...options.limits }
  const lifetimes = { ...DEFAULT_TOKEN_LIFETIMES, ...options.tokenLifetimes }
  const secret = await resolveJwtSecret(store, options.jwtSecret)
  const auth = createAuthService({ store, jwt: createJwtCodec(secret), clock, lifetimes })
  const bootstrap = await ensureInitialData(store, { adminLogin: options.admin?.login, adminPassword: options.admin?.password })
  const waiters = createWaiterRegistry()
  const ctx: ServiceContext = { store, hub, clock, logger, limits, auth, waiters }
  const retention = createRetentionPruner({ store, clock, logger, retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS })
  retention.start()
  let closing: Promise<void> | undefined
  return {
    store,
    hub,
    clock,
    logger,
    limits,
    bootstrap,
    tokens: auth,
    info: createInfoService({ clock, cluster: options.cluster, describeStore: () => `storage: ${store.dialect}` }),
    configuration: createConfigurationService(store),
    users: createUserService(ctx),
    networks: createNetworkService(ctx),
    deviceTypes: createDeviceTypeService(ctx),
    devices: createDeviceService(ctx),
    commands: createCommandService(ctx),
    notifications: createNotificationService(ctx),
    plugins: createPluginService(ctx),
    retention,
    releaseWaiters () {
      waiters.releaseAll()
    },
    close () {
      closing ??= (async () => {
        waiters.releaseAll()
        await retention.stop()
        await hub.close()
        await store.close()
      })()
      return closing
    }
  }
}
