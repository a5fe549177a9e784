/**
 * PostgreSQL only: message stamps and ids drawn without a lock held until commit (issue #12).
 *
 * Until now every command or notification write took the `message_clock` row lock and kept it
 * until its commit was flushed, so stamps followed commit order and every writer of every
 * instance queued behind one lock. Now a write draws its stamps (and, for inserts, its ids)
 * with `devicehub_draw()`: a mutex (an advisory lock) held only while three sequences move,
 * never until commit. Stamps and ids therefore follow draw order, and commits may land out of
 * that order. Readers get their order back from `devicehub_stamp_horizon()` and the draw chain
 * (each event names the stamp drawn before it): see store/ordering/ordered-bus.ts.
 *
 * `devicehub_draw()` returns `next_xid`, a transaction id above that of every writer that drew
 * before it, so once every transaction below `next_xid` has ended (`pg_snapshot_xmin` of a
 * fresh snapshot is at or above it), every stamp before this one is committed or never will be
 * (how it is found: stamp-draw-functions.ts, and 0017, which corrected it).
 *
 * `ordered` keeps the old rule for a single instance whose bus does not ride the statement
 * (the memory bus): it takes the clock row's lock first, so those writes commit in stamp
 * order, and keeps `last_ts` as the committed high-water mark.
 *
 * SQLite serialises writers anyway and keeps the clock row.
 */
import type { Kysely, Migration } from 'kysely'
import { sql } from 'kysely'
import type { MigrationDialect } from './migration-dialect.js'
import { quoteIdent, stampDrawFunctions, stampDrawNames, stampsSequence } from './stamp-draw-functions.js'

export function stampDrawMigration ({ kind }: MigrationDialect): Migration {
  return {
    async up (db: Kysely<unknown>) {
      if (kind !== 'postgres') return
      const names = await stampDrawNames(db)
      const stamps = stampsSequence(names)
      const clock = `${quoteIdent(names.schema)}.message_clock`
      await sql.raw(`create sequence ${stamps} minvalue 0`).execute(db)
      await sql.raw(`select setval('${stamps}', greatest(0, (select last_ts from ${clock} where id = 1)))`).execute(db)
      // The functions as they are now (stamp-draw-functions.ts); 0017 replaced those of earlier versions.
      for (const statement of stampDrawFunctions(names)) await sql.raw(statement).execute(db)
    },
    async down (db: Kysely<unknown>) {
      if (kind !== 'postgres') return
      await sql`drop function if exists devicehub_stamp_horizon()`.execute(db)
      await sql`drop function if exists devicehub_draw(text, integer, bigint, boolean)`.execute(db)
      await sql`update message_clock set last_ts = greatest(last_ts, (select last_value from devicehub_stamps)) where id = 1`.execute(db)
      await sql`drop sequence if exists devicehub_stamps`.execute(db)
    }
  }
}
