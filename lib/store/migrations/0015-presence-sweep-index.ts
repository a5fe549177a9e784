/**
 * The offline sweep (core/presence/presence-service.ts) asks every few seconds for the online
 * devices not seen since a moment, oldest first. With only `last_seen` indexed it walked every
 * device not seen since then, online or not, and read each row to check `online`: every device
 * that ever went offline, on every sweep. On SQLite, on the event loop: 100,000 devices that had
 * gone offline made each sweep a 9 ms stall (issue #26). `(online, last_seen)` finds the online
 * ones directly. `last_seen` alone stays: the device list's presence filter reads by it.
 */
import type { Kysely, Migration } from 'kysely'

export function presenceSweepIndexMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.createIndex('device_presence_online_last_seen_idx').ifNotExists().on('device_presence')
        .columns(['online', 'last_seen']).execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.dropIndex('device_presence_online_last_seen_idx').ifExists().execute()
    }
  }
}
