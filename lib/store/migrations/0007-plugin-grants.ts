/**
 * Plugin grants (issue 22): a plugin reaches no further than the token that registered or last
 * updated it. `plugins.network_grant` and `plugins.device_type_grant` keep that token's network
 * and device-type lists: `*` for all, otherwise comma-separated ids (empty: none). Existing
 * plugins get `*`, which keeps what they could reach before (their owner's assignments).
 */
import type { Kysely, Migration } from 'kysely'

export function pluginGrantsMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('plugins').addColumn('network_grant', 'text', (c) => c.notNull().defaultTo('*')).execute()
      await db.schema.alterTable('plugins').addColumn('device_type_grant', 'text', (c) => c.notNull().defaultTo('*')).execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.alterTable('plugins').dropColumn('device_type_grant').execute()
      await db.schema.alterTable('plugins').dropColumn('network_grant').execute()
    }
  }
}
