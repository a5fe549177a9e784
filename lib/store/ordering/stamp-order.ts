/**
 * The stamp draw's position on PostgreSQL (migration 0006), for the ordered bus (ordered-bus.ts).
 * Both reads are single statements on the store's pool, so they see the store's schema.
 */
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { LogCursor } from '../../core/realtime/log-cursor.js'
import type { Database } from '../database.js'

/**
 * Where the stamp draw stands: the last stamp and ids handed out (`cursor`: every message of the
 * log is at or below it once drawn), and a transaction id above that of every writer that drew
 * up to them (migration 0017: not a snapshot's `xmax`, which a running writer may hold).
 */
export interface DrawHorizon {
  cursor: LogCursor
  nextXid: number
}

/** What the ordered bus asks the store (see `DrawLink` in core/realtime/bus.ts). */
export interface StampOrder {
  /** The draw's current position, read atomically with respect to draws. */
  horizon(): Promise<DrawHorizon>
  /**
   * Whether every transaction of this database below `nextXid` has ended (so every stamp drawn
   * before it is settled). Prepared (two-phase) transactions are not seen: devicehub never prepares.
   */
  settled(nextXid: number): Promise<boolean>
}

/**
 * @example
 * const order = createStampOrder(store.db)
 * const { cursor, nextXid } = await order.horizon()
 */
export function createStampOrder (db: Kysely<Database>): StampOrder {
  return {
    async horizon () {
      const { rows } = await sql<{ stamp: string, notification: string, command: string, next_xid: string }>`
        select * from devicehub_stamp_horizon()`.execute(db)
      const row = rows[0]!
      return {
        cursor: { clock: Number(row.stamp), notification: Number(row.notification), command: Number(row.command) },
        nextXid: Number(row.next_xid)
      }
    },
    async settled (nextXid) {
      // Only a transaction of this database can have drawn, so only those are looked at: a
      // snapshot's xmin counts the whole cluster, and a long write in another database (another
      // application, a batch job, another test's database in CI) held back every gap, every
      // resync and the start with it. Transaction ids are compared modulo 2^32 (pg_stat_activity
      // shows 32-bit ids to every role): a running id lies within 2^31 of the next to be assigned.
      const { rows } = await sql<{ settled: boolean }>`
        select not exists (
          select 1 from pg_stat_activity
          where datid = (select oid from pg_database where datname = current_database())
            and backend_xid is not null
            and ((${nextXid}::bigint - backend_xid::text::bigint) % 4294967296 + 4294967296) % 4294967296 between 1 and 2147483647
        ) as settled`.execute(db)
      return rows[0]?.settled === true
    }
  }
}
