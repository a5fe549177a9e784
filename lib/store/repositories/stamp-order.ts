/**
 * The stamp draw's position on PostgreSQL (migration 0006), for ordered-doorbell.ts. Both reads
 * are single statements on the store's pool, so they see the store's schema.
 */
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { StampOrder } from '../../core/ports.js'
import type { Database } from '../database.js'

export function createStampOrder (db: Kysely<Database>): StampOrder {
  return {
    async horizon () {
      const { rows } = await sql<{ stamp: string, notification: string, command: string, next_xid: string }>`
        select * from devicehub_stamp_horizon()`.execute(db)
      const row = rows[0]!
      return {
        stamp: Number(row.stamp),
        notification: Number(row.notification),
        command: Number(row.command),
        nextXid: Number(row.next_xid)
      }
    },
    async settled (nextXid) {
      // xmin of a fresh snapshot: the oldest transaction id still running (or the next to be assigned).
      const { rows } = await sql<{ settled: boolean }>`
        select pg_snapshot_xmin(pg_current_snapshot())::text::bigint >= ${nextXid}::bigint as settled`.execute(db)
      return rows[0]?.settled === true
    }
  }
}
