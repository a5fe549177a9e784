/**
 * The poll cursor comes from the server's clock (issue #16): every command and notification
 * gets `clock_ts`, the message clock's stamp of its insert, whether or not the client gave a
 * `timestamp`. Polls order and filter by it, so a client-given timestamp (9999-12-31, 1970) is
 * stored and shown as given but cannot hold every cursor-less poll open or hide an item.
 *
 * Rows written before this migration get their own timestamp as stamp: until now that was the
 * cursor, so every cursor a client holds keeps its meaning.
 *
 * The single-column `timestamp` indexes served only the cursor-less-of-device polls, which now
 * read by `clock_ts`; they are replaced, so an insert maintains one index more, not two.
 */
import type { Kysely, Migration } from 'kysely'
import { sql } from 'kysely'

const TABLES = ['commands', 'notifications'] as const

export function messageStampsMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      for (const table of TABLES) {
        await db.schema.alterTable(table).addColumn('clock_ts', 'bigint').execute()
        await sql`update ${sql.table(table)} set clock_ts = timestamp`.execute(db)
        await db.schema.createIndex(`${table}_clock_ts_idx`).on(table).column('clock_ts').execute()
        await db.schema.createIndex(`${table}_device_clock_ts_idx`).on(table).columns(['device_id', 'clock_ts']).execute()
        await db.schema.dropIndex(`${table}_timestamp_idx`).ifExists().execute()
      }
    },
    async down (db: Kysely<unknown>) {
      for (const table of TABLES) {
        await db.schema.createIndex(`${table}_timestamp_idx`).ifNotExists().on(table).column('timestamp').execute()
        await db.schema.dropIndex(`${table}_device_clock_ts_idx`).ifExists().execute()
        await db.schema.dropIndex(`${table}_clock_ts_idx`).ifExists().execute()
        await db.schema.alterTable(table).dropColumn('clock_ts').execute()
      }
    }
  }
}
