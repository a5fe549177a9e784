/**
 * The store: the core's repository ports over one Kysely instance, for any dialect. Every
 * repository goes through the constraint-error boundary of errors.ts.
 */
import type { Kysely, Transaction } from 'kysely'
import type { Store } from '../core/ports.js'
import type { Database } from './database.js'
import type { StoreDialect } from './dialect.js'
import { guardRepository } from './errors.js'
import type { ReadCache, ReadCacheOptions } from './read-cache.js'
import { cachedRepository, createReadCache } from './read-cache.js'
import { createCommandRepository } from './repositories/commands.js'
import { createConfigurationRepository, createSecretRepository } from './repositories/configuration.js'
import { createDeviceRepository } from './repositories/devices.js'
import { createMessageFeedRepository } from './repositories/message-feed.js'
import { createMqttSessionRepository } from './repositories/mqtt-sessions.js'
import { createNamedEntityRepository } from './repositories/named-entities.js'
import { createNotificationRepository } from './repositories/notifications.js'
import { createPluginRepository } from './repositories/plugins.js'
import { createPresenceRepository } from './repositories/presence.js'
import { createPurgeRepository } from './repositories/purges.js'
import { createUserRepository } from './repositories/users.js'
import type { DirectExecutor, QueryRunner, QueryTemplates } from './query-templates.js'
import { createQueryTemplates } from './query-templates.js'
import type { QueryTiming } from './query-timing.js'
import { createQueryTiming } from './query-timing.js'
import type { MessageWrites } from './repositories/message-writes.js'

type RepositoryName = 'users' | 'networks' | 'deviceTypes' | 'devices' | 'commands' | 'notifications' | 'configuration' |
  'secrets' | 'plugins' | 'feed' | 'presence' | 'purges' | 'mqttSessions'

export interface KyselyStore extends Store {
  /** The Kysely instance, for the store's own tests and dialect-specific extensions. */
  readonly db: Kysely<Database>
  /**
   * Server process ids of the store's open connections, kept current (PostgreSQL; empty on
   * SQLite): the log's ordering tells its bus which notifications are its own writes'.
   */
  readonly sessions: ReadonlySet<number>
}

export interface KyselyStoreOptions {
  /** The read cache of users, assignments and devices (read-cache.ts); `{ ttlMs: 0 }` turns it off. */
  readCache?: ReadCacheOptions
  /**
   * The dialect's way to run the query templates past Kysely's executor, given the store's own
   * handle (`db` with the store's plugins): sqlite-direct.ts, postgres.ts. Default: none.
   */
  directExecutor?: (root: QueryRunner) => DirectExecutor
  /** The dialect's live set of its connections' server process ids (`KyselyStore.sessions`). Default: none. */
  sessions?: ReadonlySet<number>
  /** How the dialect sees other processes' commits (`Store.watchOtherWriters`). Default: never. */
  watchOtherWriters?: (listener: () => void) => () => void
}

/**
 * @example
 * const store = createKyselyStore(new Kysely<Database>({ dialect }), sqliteDialect)
 */
export function createKyselyStore (db: Kysely<Database>, dialect: StoreDialect, options: KyselyStoreOptions = {}): KyselyStore {
  const timing = createQueryTiming()
  const root = db.withPlugin(timing.plugin)
  const templates = createQueryTemplates({ timing, prefix: dialect.templatePrefix, direct: options.directExecutor?.(root) })
  const shared: Shared = {
    cache: createReadCache(options.readCache), timing, templates, sessions: options.sessions ?? new Set(),
    watchOtherWriters: options.watchOtherWriters ?? (() => () => {}), ownWrites: new Set()
  }
  return build(root, dialect, undefined, shared)
}

/** What a store shares with the stores of its transactions. */
interface Shared {
  cache: ReadCache
  timing: QueryTiming
  templates: QueryTemplates
  sessions: ReadonlySet<number>
  watchOtherWriters: (listener: () => void) => () => void
  /** `Store.watchOwnWrites` listeners. */
  ownWrites: Set<(tx: Store) => Promise<void>>
}

function build (
  db: Kysely<Database> | Transaction<Database>,
  dialect: StoreDialect,
  pending: Array<() => void> | undefined,
  shared: Shared
): KyselyStore {
  const { cache, timing, templates } = shared
  const inTransaction = pending !== undefined
  // Inside a transaction, writes also clear the cache once the transaction commits.
  const afterCommit = pending === undefined ? undefined : (fn: () => void) => { pending.push(fn) }
  // After each write of a cached repository: `watchOwnWrites` (the hub tells the other instances).
  const written = async (): Promise<void> => {
    for (const listener of [...shared.ownWrites]) {
      if (inTransaction) await listener(store)
      else await listener(store).catch(() => {})
    }
  }
  const cachedWrites = { afterCommit, written }
  // A transaction builds a store of its own, and a write transaction touches one or two of its
  // repositories: each is built (and wrapped) on first use, not all of them per transaction.
  const built: Partial<Record<RepositoryName, unknown>> = {}
  const once = <K extends RepositoryName>(name: K, create: () => Store[K]): Store[K] =>
    (built[name] ??= create()) as Store[K]
  // The dialect's own message writes, when it has them: one per handle (its combiners are per pool).
  let writes: MessageWrites | undefined | null = null
  const messageWrites = (): MessageWrites | undefined => {
    if (writes === null) writes = dialect.messageWrites?.(db, templates)
    return writes
  }
  const store: KyselyStore = {
    db,
    dialect: dialect.name,
    sessions: shared.sessions,
    // Users, assignments and devices are read by every request (authentication, device scope).
    // Every write of these repositories (and of networks and device types, whose deletion
    // cascades to devices and assignments) clears the cache.
    get users () {
      return once('users', () => cachedRepository(guardRepository(createUserRepository(db), dialect), cache, {
        cached: { findById: 'user', networkIds: 'user-networks', deviceTypeIds: 'user-device-types' },
        reads: ['findByLogin', 'list', 'count', 'countActiveAdmins', 'clientsOfNetwork', 'clientsOfDeviceType']
      }, cachedWrites))
    },
    get networks () {
      return once('networks', () => cachedRepository(guardRepository(createNamedEntityRepository(db, 'networks'), dialect), cache, {
        reads: ['findById', 'findByName', 'list', 'count']
      }, cachedWrites))
    },
    get deviceTypes () {
      return once('deviceTypes', () => cachedRepository(guardRepository(createNamedEntityRepository(db, 'device_types'), dialect), cache, {
        reads: ['findById', 'findByName', 'list', 'count']
      }, cachedWrites))
    },
    get devices () {
      return once('devices', () => cachedRepository(guardRepository(createDeviceRepository(db, templates), dialect), cache, {
        cached: { findById: 'device' },
        reads: ['list', 'count']
      }, cachedWrites))
    },
    get commands () {
      return once('commands', () => guardRepository(createCommandRepository(db, messageWrites(), templates), dialect))
    },
    get notifications () {
      return once('notifications', () => guardRepository(createNotificationRepository(db, messageWrites(), templates), dialect))
    },
    get configuration () {
      return once('configuration', () => guardRepository(createConfigurationRepository(db), dialect))
    },
    get secrets () {
      return once('secrets', () => guardRepository(createSecretRepository(db), dialect))
    },
    get plugins () {
      return once('plugins', () => guardRepository(createPluginRepository(db), dialect))
    },
    get feed () {
      return once('feed', () => guardRepository(createMessageFeedRepository(db, templates), dialect))
    },
    // Not cached and not a device write: presence changes every few seconds per device.
    get presence () {
      return once('presence', () => guardRepository(createPresenceRepository(db, templates), dialect))
    },
    get purges () {
      return once('purges', () => guardRepository(createPurgeRepository(db), dialect))
    },
    get mqttSessions () {
      return once('mqttSessions', () => guardRepository(createMqttSessionRepository(db), dialect))
    },
    async transaction (fn) {
      // Nested calls join the transaction already open (one connection on SQLite).
      if (inTransaction) return fn(store)
      const callbacks: Array<() => void> = []
      const result = await db.transaction().execute((trx) => fn(build(trx, dialect, callbacks, shared)))
      for (const callback of callbacks) callback()
      return result
    },
    afterCommit (fn) {
      if (pending !== undefined) pending.push(fn)
      else fn()
    },
    async notify (channel, payload) {
      await dialect.notify?.(db, channel, payload)
    },
    forgetReads: () => cache.invalidate(),
    watchOtherWriters: shared.watchOtherWriters,
    watchOwnWrites (listener) {
      // An entry of its own: one function watched twice is two watches, each stopped by its own off().
      const entry = (tx: Store): Promise<void> => listener(tx)
      shared.ownWrites.add(entry)
      return () => { shared.ownWrites.delete(entry) }
    },
    observeQueries: timing.observe,
    async close () {
      if (inTransaction) return
      await db.destroy()
      await dialect.close?.(db)
    }
  }
  return store
}
