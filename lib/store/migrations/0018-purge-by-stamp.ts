/**
 * Commands and notifications are pruned by their stamps, not by `stored_at` (issue #26): a
 * notification insert maintained three indexes and a command write four, and the one on
 * `stored_at` served only the retention purge. Dropping it cut SQLite's cost of a notification
 * row by a fifth (4.0 to 3.1 µs per row of a 32-row batch, better-sqlite3, stop 55). A row's last
 * stamp (`clock_ts` of a notification, `last_updated` of a command) is at most the client
 * timestamp window before its last write (client-timestamp.ts), so the purge subtracts that
 * window and no row goes before its retention has passed; a burst can run the clock ahead of
 * time, and its rows are then kept a little longer.
 *
 * New writes leave `stored_at` null (an update nulls it). Rows written before this migration
 * keep theirs and are pruned by it, found through a partial index that holds only them
 * (`stored_at is not null`): before migration 0004 a row's stamp was its client-given timestamp
 * (any date), so it cannot stand for its write time. That index only shrinks: no insert or
 * update adds to it.
 *
 * Building the partial indexes reads each table once (PostgreSQL blocks its writes meanwhile).
 * Down restores the full indexes and gives rows written since their last stamp as `stored_at`.
 */
import type { Kysely, Migration } from 'kysely'
import { sql } from 'kysely'

/** Each table and the column holding its last stamp. */
const TABLES = [['notifications', 'clock_ts'], ['commands', 'last_updated']] as const

export function purgeByStampMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      for (const [table] of TABLES) {
        await db.schema.createIndex(`${table}_stored_at_legacy_idx`).ifNotExists().on(table).column('stored_at')
          .where(sql.ref('stored_at'), 'is not', null).execute()
        await db.schema.dropIndex(`${table}_stored_at_idx`).ifExists().execute()
      }
    },
    async down (db: Kysely<unknown>) {
      for (const [table, stamp] of TABLES) {
        await sql`update ${sql.table(table)} set stored_at = ${sql.ref(stamp)} where stored_at is null`.execute(db)
        await db.schema.createIndex(`${table}_stored_at_idx`).ifNotExists().on(table).column('stored_at').execute()
        await db.schema.dropIndex(`${table}_stored_at_legacy_idx`).ifExists().execute()
      }
    }
  }
}
