/**
 * Security and data integrity (issue #16):
 *
 * - `users.token_version`: every change of a user's role, status or password increments it;
 *   tokens carry the version they were issued under (claim `v`, absent = 0), so older tokens,
 *   access and refresh alike, stop working.
 * - `commands.device_key` / `notifications.device_key`: the internal key (`devices.id`, never
 *   reused) of the device a message was written for. Device ids are chosen by clients and can
 *   be reused after a delete; reads by device id also match the key, so a new device with an
 *   old id sees nothing of the old one's history.
 * - `message_purge`: histories of deleted devices, removed in background batches. Rows whose
 *   device no longer exists when this migration runs are queued here too.
 */
import type { Kysely, Migration } from 'kysely'
import { sql } from 'kysely'
import type { MigrationDialect } from './migration-dialect.js'

export function securityMigration ({ identity }: MigrationDialect): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('users').addColumn('token_version', 'integer', (c) => c.notNull().defaultTo(0)).execute()
      await db.schema.createTable('message_purge')
        .addColumn('id', identity.type, identity.build)
        .addColumn('device_id', 'varchar(48)', (c) => c.notNull())
        .addColumn('device_key', 'bigint')
        .execute()
      for (const table of ['commands', 'notifications']) {
        await db.schema.alterTable(table).addColumn('device_key', 'bigint').execute()
        await sql`update ${sql.table(table)}
          set device_key = (select d.id from devices d where d.device_id = ${sql.table(table)}.device_id)`
          .execute(db)
        await sql`insert into message_purge (device_id, device_key)
          select distinct device_id, cast(null as bigint) from ${sql.table(table)} where device_key is null`.execute(db)
      }
    },
    async down (db: Kysely<unknown>) {
      for (const table of ['commands', 'notifications']) {
        await db.schema.alterTable(table).dropColumn('device_key').execute()
      }
      await db.schema.dropTable('message_purge').ifExists().execute()
      await db.schema.alterTable('users').dropColumn('token_version').execute()
    }
  }
}
