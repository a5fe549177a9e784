/**
 * Which connection holds a durable MQTT session (issue #25): one row per (user, client id) while
 * a persistent session is connected somewhere, removed once that connection has closed and its
 * acknowledgements are written. An instance taking the session over waits for the row to go
 * before it reads the cursors, so a device hopping between instances in milliseconds does not
 * get an acknowledged command again.
 */
import type { Kysely, Migration } from 'kysely'

export function mqttSessionHoldersMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('mqtt_session_holders')
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('client_id', 'varchar(256)', (c) => c.notNull())
        // `<instance>:<connection>`: random per server instance, so holders never collide.
        .addColumn('holder', 'varchar(128)', (c) => c.notNull())
        .addColumn('since', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('mqtt_session_holders_pk', ['user_id', 'client_id'])
        .execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.dropTable('mqtt_session_holders').ifExists().execute()
    }
  }
}
