/**
 * Messaging storage. `stored_at` (server time of the last write) is what retention prunes by, so
 * a client-given timestamp far in the past (a device with an unset clock) does not get its row
 * deleted at the next pass.
 *
 * The message clock (R9): one row whose `last_ts` every command/notification write advances
 * to `max(last_ts + 1, now)` inside its transaction. The row lock orders writers, so
 * server-assigned timestamps strictly increase in commit order on every dialect and across
 * instances, and a `timestamp > cursor` poll never loses or repeats an item.
 */
import type { Kysely, Migration } from 'kysely'

export function messageClockMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('message_clock')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('last_ts', 'bigint', (c) => c.notNull())
        .execute()
      await (db as Kysely<{ message_clock: { id: number, last_ts: number } }>)
        .insertInto('message_clock').values({ id: 1, last_ts: 0 }).execute()
      for (const table of ['commands', 'notifications']) {
        await db.schema.alterTable(table).addColumn('stored_at', 'bigint').execute()
        await db.schema.createIndex(`${table}_stored_at_idx`).on(table).column('stored_at').execute()
      }
    },
    async down (db: Kysely<unknown>) {
      for (const table of ['commands', 'notifications']) {
        await db.schema.dropIndex(`${table}_stored_at_idx`).ifExists().execute()
        await db.schema.alterTable(table).dropColumn('stored_at').execute()
      }
      await db.schema.dropTable('message_clock').ifExists().execute()
    }
  }
}
