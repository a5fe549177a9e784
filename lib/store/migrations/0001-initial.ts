/**
 * Every table of the contract. Frozen: later changes are new migrations.
 * Column types are dialect-neutral (see database.ts); only identity keys differ per dialect.
 */
import type { Kysely, Migration } from 'kysely'
import type { MigrationDialect } from './migration-dialect.js'

export function initialMigration ({ identity }: MigrationDialect): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('users')
        .addColumn('id', identity.type, identity.build)
        .addColumn('login', 'varchar(128)', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'integer', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('login_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_login', 'bigint')
        .addColumn('data', 'text')
        .addColumn('intro_reviewed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('all_device_types_available', 'integer', (c) => c.notNull().defaultTo(1))
        .execute()

      for (const table of ['networks', 'device_types']) {
        await db.schema.createTable(table)
          .addColumn('id', identity.type, identity.build)
          .addColumn('name', 'varchar(128)', (c) => c.notNull().unique())
          .addColumn('description', 'varchar(128)')
          .addColumn('entity_version', 'integer', (c) => c.notNull().defaultTo(0))
          .execute()
      }

      await db.schema.createTable('user_networks')
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('network_id', 'bigint', (c) => c.notNull().references('networks.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('user_networks_pk', ['user_id', 'network_id'])
        .execute()
      await db.schema.createIndex('user_networks_network_idx').on('user_networks').column('network_id').execute()

      await db.schema.createTable('user_device_types')
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('device_type_id', 'bigint', (c) => c.notNull().references('device_types.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('user_device_types_pk', ['user_id', 'device_type_id'])
        .execute()
      await db.schema.createIndex('user_device_types_type_idx').on('user_device_types').column('device_type_id').execute()

      await db.schema.createTable('devices')
        .addColumn('id', identity.type, identity.build)
        .addColumn('device_id', 'varchar(48)', (c) => c.notNull().unique())
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('data', 'text')
        .addColumn('network_id', 'bigint', (c) => c.notNull().references('networks.id').onDelete('cascade'))
        .addColumn('device_type_id', 'bigint', (c) => c.notNull().references('device_types.id').onDelete('cascade'))
        .addColumn('is_blocked', 'integer', (c) => c.notNull().defaultTo(0))
        .execute()
      await db.schema.createIndex('devices_network_idx').on('devices').column('network_id').execute()
      await db.schema.createIndex('devices_device_type_idx').on('devices').column('device_type_id').execute()

      // Commands and notifications are history (R8): they keep the device id as text and
      // outlive the device until retention prunes them.
      await db.schema.createTable('commands')
        .addColumn('id', identity.type, identity.build)
        .addColumn('device_id', 'varchar(48)', (c) => c.notNull())
        .addColumn('network_id', 'bigint', (c) => c.notNull())
        .addColumn('device_type_id', 'bigint', (c) => c.notNull())
        .addColumn('user_id', 'bigint')
        .addColumn('command', 'varchar(128)', (c) => c.notNull())
        .addColumn('parameters', 'text')
        .addColumn('lifetime', 'integer')
        .addColumn('status', 'varchar(128)')
        .addColumn('result', 'text')
        .addColumn('timestamp', 'bigint', (c) => c.notNull())
        .addColumn('last_updated', 'bigint', (c) => c.notNull())
        .addColumn('is_updated', 'integer', (c) => c.notNull().defaultTo(0))
        .execute()
      await db.schema.createIndex('commands_device_timestamp_idx').on('commands').columns(['device_id', 'timestamp']).execute()
      await db.schema.createIndex('commands_timestamp_idx').on('commands').column('timestamp').execute()
      await db.schema.createIndex('commands_last_updated_idx').on('commands').column('last_updated').execute()

      await db.schema.createTable('notifications')
        .addColumn('id', identity.type, identity.build)
        .addColumn('device_id', 'varchar(48)', (c) => c.notNull())
        .addColumn('network_id', 'bigint')
        .addColumn('device_type_id', 'bigint')
        .addColumn('notification', 'varchar(128)', (c) => c.notNull())
        .addColumn('parameters', 'text')
        .addColumn('timestamp', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('notifications_device_timestamp_idx').on('notifications').columns(['device_id', 'timestamp']).execute()
      await db.schema.createIndex('notifications_timestamp_idx').on('notifications').column('timestamp').execute()

      await db.schema.createTable('configuration')
        .addColumn('name', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('value', 'varchar(128)', (c) => c.notNull())
        .addColumn('entity_version', 'integer', (c) => c.notNull().defaultTo(0))
        .execute()

      await db.schema.createTable('plugins')
        .addColumn('id', identity.type, identity.build)
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('description', 'varchar(128)')
        .addColumn('topic_name', 'varchar(128)', (c) => c.notNull().unique())
        .addColumn('filter', 'varchar(1024)', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('subscription_id', 'bigint')
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('parameters', 'text')
        .execute()
      await db.schema.createIndex('plugins_user_idx').on('plugins').column('user_id').execute()

      await db.schema.createTable('server_secrets')
        .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute()
    },

    async down (db: Kysely<unknown>) {
      for (const table of ['server_secrets', 'plugins', 'configuration', 'notifications', 'commands', 'devices',
        'user_device_types', 'user_networks', 'device_types', 'networks', 'users']) {
        await db.schema.dropTable(table).ifExists().execute()
      }
    }
  }
}
