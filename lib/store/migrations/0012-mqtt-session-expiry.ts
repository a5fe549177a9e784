/**
 * MQTT 5 session expiry (issue #25): when a persistent session's connection ends, the deadline
 * past which the session is gone (epoch ms) is written on each of its subscriptions; null while
 * connected, and for a session that never expires (MQTT 3.1.1's clean session 0, MQTT 5's
 * 0xFFFFFFFF). A session found past its deadline is dropped instead of resumed.
 */
import type { Kysely, Migration } from 'kysely'

export function mqttSessionExpiryMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('mqtt_subscriptions').addColumn('expires_at', 'bigint').execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.alterTable('mqtt_subscriptions').dropColumn('expires_at').execute()
    }
  }
}
