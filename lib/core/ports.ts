/**
 * The seams of the core: what it needs from storage and from the realtime bus, in domain
 * terms only. The store never sees a token or a principal; services hand it a plain
 * {@link DataScope}. Each area keeps its repository interface next to its service.
 */
import type { CommandRepository } from './commands/command-ports.js'
import type { ConfigurationRepository, SecretRepository } from './configuration/configuration-ports.js'
import type { DeviceRepository, PurgeRepository } from './devices/device-ports.js'
import type { DeviceTypeRepository } from './device-types/device-type-ports.js'
import type { MqttSessionRepository } from './mqtt-sessions/mqtt-session-ports.js'
import type { NetworkRepository } from './networks/network-ports.js'
import type { NotificationRepository } from './notifications/notification-ports.js'
import type { PluginRepository } from './plugins/plugin-ports.js'
import type { MessageFeedRepository } from './realtime/message-feed.js'
import type { PresenceRepository } from './presence/presence-ports.js'
import type { UserRepository } from './users/user-ports.js'

// The plain values every port shares live in a leaf module (values.ts), so that the areas'
// ports can use them without importing this file, which imports theirs.
export type { DataScope, JsonObject, Page } from './values.js'
export { FULL_SCOPE } from './values.js'

/**
 * The storage port. Every repository method is one short statement or transaction;
 * `transaction` runs several of them atomically against the same connection.
 *
 * @example
 * const id = await store.transaction(async (tx) => {
 *   const networkId = await tx.networks.insert({ name: 'Lab', description: null })
 *   await tx.users.assignNetwork(userId, networkId)
 *   return networkId
 * })
 */
export interface Store {
  readonly dialect: 'sqlite' | 'postgres'
  readonly users: UserRepository
  readonly networks: NetworkRepository
  readonly deviceTypes: DeviceTypeRepository
  readonly devices: DeviceRepository
  readonly commands: CommandRepository
  readonly notifications: NotificationRepository
  readonly configuration: ConfigurationRepository
  readonly secrets: SecretRepository
  readonly plugins: PluginRepository
  /** Every message in commit order, by position (plugin delivery). */
  readonly feed: MessageFeedRepository
  readonly presence: PresenceRepository
  /** Histories of deleted devices still to remove. */
  readonly purges: PurgeRepository
  /** Durable MQTT sessions: subscriptions and acknowledged-command cursors (issue #25). */
  readonly mqttSessions: MqttSessionRepository
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>
  /**
   * Runs `fn` once the surrounding transaction has committed (at once outside a transaction;
   * never if it rolls back). The memory bus delivers its events this way.
   */
  afterCommit(fn: () => void): void
  /**
   * Sends a database notification on `channel` as part of the current transaction, so it is
   * delivered exactly at commit (PostgreSQL NOTIFY). A no-op where the dialect has none.
   */
  notify(channel: string, payload: string): Promise<void>
  /**
   * Drops what the store keeps of earlier reads (users, assignments, devices): the hub calls it
   * when a `stale-reads`, `revoke` or `resync` says another instance changed rows that its own
   * writes never invalidated here.
   */
  forgetReads(): void
  /**
   * Calls `listener` after each of this store's writes to the rows `forgetReads` covers (users,
   * assignments, networks, device types, devices), with the store of the write's transaction, so
   * that what it publishes there commits with the write (outside a transaction the write has
   * committed: the listener's failure is then ignored, and other instances' reads wait out their
   * age). Returns the function that stops it.
   *
   * @example
   * const off = store.watchOwnWrites((tx) => bus.publish({ kind: 'stale-reads' }, tx))
   */
  watchOwnWrites(listener: (tx: Store) => Promise<void>): () => void
  /**
   * Calls `listener` when another process may have committed to the database since it last
   * looked, which no bus event tells (SQLite: the CLI writing the file a server runs on, seen
   * within 250 ms); returns the function that stops it. Never where every writer publishes its
   * own events (PostgreSQL: other instances use the bus, the CLI sends its revocations there).
   *
   * @example
   * const off = store.watchOtherWriters(() => void bus.publish({ kind: 'resync' }))
   */
  watchOtherWriters(listener: () => void): () => void
  close(): Promise<void>
  /**
   * Monitoring: calls `listener` with the duration of every completed query; returns the
   * function that stops it. Optional: a store without it reports no query latency.
   */
  observeQueries?(listener: QueryListener): () => void
}

/** One completed store query: `operation` is select, insert, update, delete, raw or other. */
export type QueryListener = (query: { operation: string, seconds: number }) => void

/** A structured logger (pino-compatible subset). The core logs through it, never to stdout. */
export interface Logger {
  info(obj: object | string, msg?: string): void
  warn(obj: object | string, msg?: string): void
  error(obj: object | string, msg?: string): void
  debug(obj: object | string, msg?: string): void
}

export const silentLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  debug: () => {}
}
