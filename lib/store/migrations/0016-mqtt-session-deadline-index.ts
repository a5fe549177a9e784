/**
 * The MQTT session prune (`mqttSessions.dropExpired` without a key, every ten minutes on a
 * persistent connect) deletes the subscriptions past their deadline. With `expires_at` not
 * indexed it walked every durable subscription, on SQLite on the event loop: with 100,000
 * durable sessions each prune was a 73-107 ms stall, nothing to delete (issue #26). The lapsed
 * holds are found by a scan of the holds instead: an index on the lease would be rewritten by
 * every renewal, for all of an instance's holds every 20 s, which costs more than the scan saves.
 */
import type { Kysely, Migration } from 'kysely'

export function mqttSessionDeadlineIndexMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.createIndex('mqtt_subscriptions_expires_at_idx').ifNotExists().on('mqtt_subscriptions')
        .column('expires_at').execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.dropIndex('mqtt_subscriptions_expires_at_idx').ifExists().execute()
    }
  }
}
