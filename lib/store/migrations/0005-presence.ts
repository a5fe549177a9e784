/**
 * Device presence (issue 15): `lastSeen` per device and whether the device was announced
 * online (`$device-online` sent and no `$device-offline` since). A table of its own, so the
 * frequent presence writes never touch a device row; deleting the device deletes its row.
 */
import type { Kysely, Migration } from 'kysely'

export function presenceMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('device_presence')
        .addColumn('device_id', 'varchar(48)', (c) => c.primaryKey().references('devices.device_id').onDelete('cascade'))
        .addColumn('last_seen', 'bigint', (c) => c.notNull())
        .addColumn('online', 'integer', (c) => c.notNull().defaultTo(0))
        .execute()
      // The offline sweep and the `online` filter read by time.
      await db.schema.createIndex('device_presence_last_seen_idx').on('device_presence').columns(['last_seen']).execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.dropTable('device_presence').ifExists().execute()
    }
  }
}
