/**
 * devicehub's public API, root entry: the hub and its ports, with no web framework and no database
 * driver loaded. Named exports only. The other entries, by concept:
 * - `devicehub/server`: `startServer()`, from nothing to a listening server in one call;
 * - `devicehub/fastify`: the Fastify app and plugins (`buildServer`, `devicehubPlugin`, `devicehubWebSocketPlugin`);
 * - `devicehub/postgres`: the PostgreSQL store, its bus and the ordering of its log (needs the optional `pg`);
 * - `devicehub/testing`: the test rig and clients.
 * `openSqliteStore` stays here: SQLite is the default store, and its native driver loads only
 * when a store is opened.
 *
 * @example
 * import { createDeviceHub, openSqliteStore } from 'devicehub'
 * const hub = await createDeviceHub({ store: await openSqliteStore(':memory:') })
 */
export { createDeviceHub } from './core/devicehub.js'
export type { DeviceHub, DeviceHubOptions } from './core/devicehub.js'
export type { BootstrapResult } from './core/bootstrap.js'
export type { HealthCheck, HealthReport } from './core/operations/health.js'
export type { HubStats } from './core/operations/hub-stats.js'
export { DeviceHubError, Messages } from './core/errors.js'
export type { DeviceHubErrorCode } from './core/errors.js'
export { Action, ALL_ACTIONS, CLIENT_ACTIONS } from './core/auth/actions.js'
export { systemPrincipal } from './core/auth/principal.js'
export type { Principal } from './core/auth/principal.js'
export { deriveDeviceHiveKey, deriveJwtKey } from './core/auth/jwt-key.js'
export type { JwtKeyDerivation } from './core/auth/jwt-key.js'
export { formatTimestamp, parseTimestamp, systemClock } from './core/time.js'
export type { Clock } from './core/time.js'
export type { Store, DataScope, Logger } from './core/ports.js'
export type { Bus, BusEvent, MessageEvent, MessageKind, PluginEvent, ResyncEvent, RevokeEvent } from './core/realtime/bus.js'
export { DEFAULT_PRESENCE } from './core/presence/presence-service.js'
export type { DevicePresence, Presence, PresenceSettings } from './core/presence/presence-service.js'
export { createMemoryDoorbell } from './core/realtime/memory-doorbell.js'
export type { PluginConnection, PluginDelivery, PluginDeliveryItem, PluginMember } from './core/plugins/plugin-delivery.js'
export { LOG_ORIGIN, cursorAtClock, decodeLogCursor, encodeLogCursor } from './core/realtime/log-cursor.js'
export type { LogCursor } from './core/realtime/log-cursor.js'
export type { LogOrdering, OrderedLog } from './core/realtime/log-ordering.js'
export type { LogOrder } from './core/realtime/message-log.js'
export { iterateStream } from './core/realtime/message-stream.js'
export type { MessageStream, StreamItem, StreamSink } from './core/realtime/message-stream.js'
export type { SubscribeTargets } from './core/realtime/subscribe-scope.js'
export type { NotificationSubscribeInput } from './core/notifications/notification-service.js'
export type { CommandSubscribeInput } from './core/commands/command-service.js'
export { openSqliteStore } from './store/dialects/sqlite.js'
export type { SqliteStoreOptions } from './store/dialects/sqlite.js'
