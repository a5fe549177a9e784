/**
 * The migrations, shipped in the package and served by a static provider (no files are read at
 * run time). Names sort in the order they run.
 */
import type { Kysely, Migration, MigrationProvider, MigrationResultSet } from 'kysely'
import type { MigrationDialect } from './migration-dialect.js'
import { Migrator } from 'kysely'
import { initialMigration } from './0001-initial.js'
import { messageClockMigration } from './0002-message-clock.js'
import { securityMigration } from './0003-security.js'
import { messageStampsMigration } from './0004-message-stamps.js'
import { presenceMigration } from './0005-presence.js'
import { stampDrawMigration } from './0006-stamp-draw.js'
import { pluginGrantsMigration } from './0007-plugin-grants.js'
import { keptTokenMigration } from './0008-kept-token.js'
import { deviceNameIndexMigration } from './0009-device-name-index.js'
import { mqttSessionsMigration } from './0010-mqtt-sessions.js'
import { mqttSessionHoldersMigration } from './0011-mqtt-session-holders.js'
import { mqttSessionExpiryMigration } from './0012-mqtt-session-expiry.js'
import { messageDeviceIndexMigration } from './0013-message-device-index.js'
import { mqttSessionLeasesMigration } from './0014-mqtt-session-leases.js'
import { presenceSweepIndexMigration } from './0015-presence-sweep-index.js'
import { mqttSessionDeadlineIndexMigration } from './0016-mqtt-session-deadline-index.js'
import { drawXidMigration } from './0017-draw-xid.js'
import { purgeByStampMigration } from './0018-purge-by-stamp.js'
import { pluginActivationCursorMigration } from './0019-plugin-activation-cursor.js'

export type { MigrationDialect } from './migration-dialect.js'
export { postgresMigrationDialect, sqliteMigrationDialect } from './migration-dialect.js'

export function createMigrationProvider (dialect: MigrationDialect): MigrationProvider {
  return {
    async getMigrations (): Promise<Record<string, Migration>> {
      return {
        '0001-initial': initialMigration(dialect),
        '0002-message-clock': messageClockMigration(),
        '0003-security': securityMigration(dialect),
        '0004-message-stamps': messageStampsMigration(),
        '0005-presence': presenceMigration(),
        '0006-stamp-draw': stampDrawMigration(dialect),
        '0007-plugin-grants': pluginGrantsMigration(),
        '0008-kept-token': keptTokenMigration(),
        '0009-device-name-index': deviceNameIndexMigration(),
        '0010-mqtt-sessions': mqttSessionsMigration(),
        '0011-mqtt-session-holders': mqttSessionHoldersMigration(),
        '0012-mqtt-session-expiry': mqttSessionExpiryMigration(),
        '0013-message-device-index': messageDeviceIndexMigration(),
        '0014-mqtt-session-leases': mqttSessionLeasesMigration(),
        '0015-presence-sweep-index': presenceSweepIndexMigration(),
        '0016-mqtt-session-deadline-index': mqttSessionDeadlineIndexMigration(),
        '0017-draw-xid': drawXidMigration(dialect),
        '0018-purge-by-stamp': purgeByStampMigration(),
        '0019-plugin-activation-cursor': pluginActivationCursorMigration(dialect)
      }
    }
  }
}

export interface MigrateOptions {
  /**
   * PostgreSQL: the schema holding the migration bookkeeping tables. Without it Kysely's
   * migrator takes a `devicehub_migrations` table in ANY schema for ours.
   */
  schema?: string
}

/** Runs every pending migration; throws with the failing migration's name. */
export async function migrateToLatest (
  db: Kysely<unknown>, dialect: MigrationDialect, options: MigrateOptions = {}
): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: createMigrationProvider(dialect),
    migrationTableName: 'devicehub_migrations',
    migrationLockTableName: 'devicehub_migrations_lock',
    ...(options.schema === undefined ? {} : { migrationTableSchema: options.schema })
  })
  const result = await migrator.migrateToLatest()
  if (result.error !== undefined) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown'
    throw new Error(`Migration ${failed} failed: ${String(result.error)}`, { cause: result.error })
  }
  return result
}
