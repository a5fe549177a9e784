/**
 * PostgreSQL only: the stamp draw's `next_xid` is above every writer that drew before (issue #26,
 * found by a lost item in the two-instance cursor test).
 *
 * Until now `devicehub_draw()` and `devicehub_stamp_horizon()` returned the `xmax` of a fresh
 * snapshot as `next_xid`. That is one past the newest transaction that ended, not the next id to
 * be assigned: a writer still running may hold it or an id above it. The ordered bus then found
 * a gap "settled" while that writer was still writing, resynchronised to a horizon past its
 * stamps, and readers moved their cursors past rows that committed a moment later: lost to
 * every cursor reader of that instance. The functions now take a transaction id under the draw's
 * mutex (stamp-draw-functions.ts). Same signatures and columns: instances of the earlier version
 * keep working against them during a rolling upgrade.
 *
 * Down leaves the corrected functions in place: they fit the schema of 0006 as they are.
 */
import type { Kysely, Migration } from 'kysely'
import { sql } from 'kysely'
import type { MigrationDialect } from './migration-dialect.js'
import { stampDrawFunctions, stampDrawNames } from './stamp-draw-functions.js'

export function drawXidMigration ({ kind }: MigrationDialect): Migration {
  return {
    async up (db: Kysely<unknown>) {
      if (kind !== 'postgres') return
      for (const statement of stampDrawFunctions(await stampDrawNames(db))) await sql.raw(statement).execute(db)
    },
    async down () {}
  }
}
