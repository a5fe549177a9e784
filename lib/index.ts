/**
 * devicehub's public API. Named exports only.
 *
 * @example
 * import { startServer } from 'devicehub'
 * const server = await startServer({ db: ':memory:', port: 0 })
 */
export { createDeviceHub } from './core/devicehub.js'
export type { DeviceHub, DeviceHubOptions } from './core/devicehub.js'
export { DeviceHubError, Messages } from './core/errors.js'
export type { DeviceHubErrorCode } from './core/errors.js'
export { Action, ALL_ACTIONS, CLIENT_ACTIONS } from './core/auth/actions.js'
export { systemPrincipal } from './core/auth/principal.js'
export type { Principal } from './core/auth/principal.js'
export { deriveDeviceHiveKey } from './core/auth/jwt-key.js'
export { formatTimestamp, parseTimestamp, systemClock } from './core/time.js'
export type { Clock } from './core/time.js'
export type { Store, DataScope, Logger } from './core/ports.js'
export type { Hub, HubEvent } from './core/realtime/hub.js'
export { createMemoryHub } from './core/realtime/memory-hub.js'
export { createPostgresHub } from './hubs/postgres-hub.js'
export type { PostgresHub, PostgresHubOptions } from './hubs/postgres-hub.js'
export { buildServer } from './http/build-server.js'
export type { BuildServerOptions } from './http/build-server.js'
export { devicehubPlugin } from './http/plugin.js'
export type { DeviceHubPluginOptions } from './http/plugin.js'
export { openSqliteStore } from './store/dialects/sqlite.js'
export { openPostgresStore } from './store/dialects/postgres.js'
export type { PostgresStoreOptions } from './store/dialects/postgres.js'
export { startServer } from './start-server.js'
export type { RunningServer, StartServerOptions } from './start-server.js'
