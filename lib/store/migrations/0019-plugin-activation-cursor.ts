/**
 * The activation's cursor (issue 26's CI flake, a real loss): `plugins.activation_cursor` keeps the
 * log cursor taken when the plugin's current `subscription_id` was made, written with it. Every
 * instance starts that activation's consumers there; before, an instance that had not made the
 * activation started them at its own "now" and skipped what was released before it saw the change.
 * The value names its subscription id (`id@cursor`): an older version, which changes
 * `subscription_id` without it, leaves a value that reads as none (its consumers start at "now",
 * as before).
 */
import type { Kysely, Migration } from 'kysely'
import { sql } from 'kysely'
import type { MigrationDialect } from './migration-dialect.js'

export function pluginActivationCursorMigration (dialect: MigrationDialect): Migration {
  return {
    // Safe to repeat, as every migration from 0017 on (a test runs them again).
    async up (db: Kysely<unknown>) {
      if (dialect.kind === 'postgres') {
        await sql`alter table plugins add column if not exists activation_cursor text`.execute(db)
        return
      }
      const found = await sql`select 1 from pragma_table_info('plugins') where name = 'activation_cursor'`.execute(db)
      if (found.rows.length === 0) await db.schema.alterTable('plugins').addColumn('activation_cursor', 'text').execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.alterTable('plugins').dropColumn('activation_cursor').execute()
    }
  }
}
