/**
 * MQTT session leases (issue #25): a persistent session with a finite expiry interval gets its
 * deadline (`mqtt_subscriptions.expires_at`) when its connection ends, and a crashed instance
 * never writes it. The hold of a connected session therefore carries the session's interval
 * (`expiry_ms`, in ms; null: never expires) and a lease (`lease_until`, epoch ms) that
 * the instance serving it renews while it runs: once the lease has lapsed for longer than the
 * interval, the session is expired as if its connection had ended when the lease ran out.
 */
import type { Kysely, Migration } from 'kysely'

export function mqttSessionLeasesMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('mqtt_session_holders').addColumn('expiry_ms', 'bigint').execute()
      await db.schema.alterTable('mqtt_session_holders').addColumn('lease_until', 'bigint').execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.alterTable('mqtt_session_holders').dropColumn('lease_until').execute()
      await db.schema.alterTable('mqtt_session_holders').dropColumn('expiry_ms').execute()
    }
  }
}
