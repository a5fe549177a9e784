/**
 * Durable MQTT sessions (issue #25 point 4): a device that connects with a persistent session
 * (clean session false) and subscribes to its commands receives, on reconnect, every command
 * created while it was away. What makes that work is in the database, not in the broker's
 * memory, so it survives a restart and a reconnect to another instance: one row per
 * (user, client id, topic filter) with the filter's QoS and the cursor (server stamp, epoch ms)
 * of the last command the client acknowledged. Deleting the user deletes their sessions.
 */
import type { Kysely, Migration } from 'kysely'

export function mqttSessionsMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('mqtt_subscriptions')
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('client_id', 'varchar(256)', (c) => c.notNull())
        .addColumn('topic', 'varchar(1024)', (c) => c.notNull())
        .addColumn('qos', 'integer', (c) => c.notNull())
        // Null until the first acknowledgement: the subscription then resumes from its creation.
        .addColumn('cursor', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('mqtt_subscriptions_pk', ['user_id', 'client_id', 'topic'])
        .execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.dropTable('mqtt_subscriptions').ifExists().execute()
    }
  }
}
