/**
 * The store: the core's repository ports over one Kysely instance, for any dialect. Every
 * repository goes through the constraint-error boundary of errors.ts.
 */
import type { Kysely, Transaction } from 'kysely'
import type { Store } from '../core/ports.js'
import type { Database } from './database.js'
import type { StoreDialect } from './dialect.js'
import { guardRepository } from './errors.js'
import { createCommandRepository } from './repositories/commands.js'
import { createConfigurationRepository, createSecretRepository } from './repositories/configuration.js'
import { createDeviceRepository } from './repositories/devices.js'
import { createNamedEntityRepository } from './repositories/named-entities.js'
import { createNotificationRepository } from './repositories/notifications.js'
import { createPluginRepository } from './repositories/plugins.js'
import { createUserRepository } from './repositories/users.js'

export interface KyselyStore extends Store {
  /** The Kysely instance, for the store's own tests and dialect-specific extensions. */
  readonly db: Kysely<Database>
}

/**
 * @example
 * const store = createKyselyStore(new Kysely<Database>({ dialect }), sqliteDialect)
 */
export function createKyselyStore (db: Kysely<Database>, dialect: StoreDialect): KyselyStore {
  return build(db, dialect, undefined)
}

function build (db: Kysely<Database> | Transaction<Database>, dialect: StoreDialect, pending: Array<() => void> | undefined): KyselyStore {
  const inTransaction = pending !== undefined
  const store: KyselyStore = {
    db,
    dialect: dialect.name,
    users: guardRepository(createUserRepository(db), dialect),
    networks: guardRepository(createNamedEntityRepository(db, 'networks'), dialect),
    deviceTypes: guardRepository(createNamedEntityRepository(db, 'device_types'), dialect),
    devices: guardRepository(createDeviceRepository(db), dialect),
    commands: guardRepository(createCommandRepository(db), dialect),
    notifications: guardRepository(createNotificationRepository(db), dialect),
    configuration: guardRepository(createConfigurationRepository(db), dialect),
    secrets: guardRepository(createSecretRepository(db), dialect),
    plugins: guardRepository(createPluginRepository(db), dialect),
    async transaction (fn) {
      // Nested calls join the transaction already open (one connection on SQLite).
      if (inTransaction) return fn(store)
      const callbacks: Array<() => void> = []
      const result = await db.transaction().execute((trx) => fn(build(trx, dialect, callbacks)))
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
    async close () {
      if (inTransaction) return
      await db.destroy()
      await dialect.close?.(db)
    }
  }
  return store
}
