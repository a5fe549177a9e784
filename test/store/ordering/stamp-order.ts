/**
 * The stamp draw's `next_xid` (migrations 0006 and 0017) against real PostgreSQL transactions: a
 * gap, or a horizon, is settled only once every writer that drew up to it has ended. A snapshot's
 * `xmax` (the earlier `next_xid`) is one past the newest transaction that ended, so a writer still
 * running held it: the ordered bus resynchronised past its stamps and readers lost its rows.
 * Migration 0017 brings a database migrated before it to these functions. Only transactions of
 * the store's own database count: a long write elsewhere in the cluster held every resync back.
 */
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import pg from 'pg'
import type { Test } from 'tap'
import { openPostgresStore } from '../../../lib/store/dialects/postgres.js'
import { stampDrawFunctions, stampDrawNames } from '../../../lib/store/migrations/stamp-draw-functions.js'
import { createStampOrder } from '../../../lib/store/ordering/stamp-order.js'
import { sleep } from '../../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../../fixtures/pg-database.js'

interface Drawn { prev: number, first_stamp: number, next_xid: number }

/** A connection with a transaction open; `draw` draws in it, `commit` ends it. */
async function openWriter (t: Test, url: string) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.teardown(() => client.end())
  await client.query('begin')
  return {
    async draw (): Promise<Drawn> {
      const { rows } = await client.query(`select prev::text, first_stamp::text, next_xid::text
        from devicehub_draw('notification', 1, $1, false)`, [Date.now()])
      return { prev: Number(rows[0].prev), first_stamp: Number(rows[0].first_stamp), next_xid: Number(rows[0].next_xid) }
    },
    commit: () => client.query('commit')
  }
}

/**
 * The functions as a database migrated by an earlier version holds them: `next_xid` a snapshot's
 * `xmax`, in both (built from today's text, so the rest of their body is today's).
 */
function earlierFunctions (statements: string[]): string[] {
  const xmax = 'next_xid := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;'
  const earlier = statements.map((text) => text
    .replace(/next_xid := case when had_xid then[\s\S]*?end;/, xmax)
    .replace('next_xid := pg_current_xact_id()::text::bigint;', xmax))
  if (earlier.some((text, i) => text === statements[i])) throw new Error('the functions no longer read as this test expects')
  return earlier
}

async function drawSource (db: Kysely<unknown>): Promise<string> {
  const rows = await sql<{ source: string }>`select string_agg(prosrc, ' ') as source from pg_proc
    where proname in ('devicehub_draw', 'devicehub_stamp_horizon') and pronamespace = current_schema()::regnamespace`.execute(db)
  return rows.rows[0]!.source
}

postgresTest('migration 0017 replaces the functions of a database migrated before it', async (t, adminUrl) => {
  const url = await createTestDatabase(t, adminUrl)
  const before = await openPostgresStore(url)
  const db = before.db as Kysely<unknown>
  for (const statement of earlierFunctions(stampDrawFunctions(await stampDrawNames(db)))) await sql.raw(statement).execute(db)
  // 0017 and every later one (they run again; each is safe to repeat).
  await sql`delete from devicehub_migrations where name >= '0017-draw-xid'`.execute(db)
  const earlier = await drawSource(db)
  t.match(earlier, /next_xid := pg_snapshot_xmax/, 'the earlier functions: next_xid is a snapshot\'s xmax')
  t.notMatch(earlier, /own_xid \+ 1|next_xid := pg_current_xact_id/)
  await before.close()

  const after = await openPostgresStore(url)
  t.teardown(() => after.close())
  const source = await drawSource(after.db as Kysely<unknown>)
  t.match(source, /own_xid \+ 1/, 'the draw takes its id under the mutex')
  t.match(source, /next_xid := pg_current_xact_id\(\)::text::bigint;/, 'the horizon takes its own id')
  t.notMatch(source, /next_xid := pg_snapshot_xmax/, 'no snapshot xmax is a next_xid any more')
  await settlesOnlyAfterEveryWriter(t, url, after)
})

postgresTest('a horizon and a link settle only once every writer that drew up to them has ended', async (t, adminUrl) => {
  const url = await createTestDatabase(t, adminUrl)
  const store = await openPostgresStore(url)
  t.teardown(() => store.close())
  await settlesOnlyAfterEveryWriter(t, url, store)
})

async function settlesOnlyAfterEveryWriter (t: Test, url: string, store: Awaited<ReturnType<typeof openPostgresStore>>): Promise<void> {
  const order = createStampOrder(store.db)

  // The first writer draws and stays open: the newest transaction id, still running.
  const first = await openWriter(t, url)
  const firstDraw = await first.draw()
  const horizon = await order.horizon()
  t.ok(horizon.cursor.clock >= firstDraw.first_stamp, 'the horizon covers the open draw')
  t.equal(await order.settled(horizon.nextXid), false, 'not settled while the writer that drew runs')

  // A second writer draws after it and commits: its link must not settle the first one's gap.
  const second = await openWriter(t, url)
  const secondDraw = await second.draw()
  await second.commit()
  t.equal(secondDraw.prev, firstDraw.first_stamp, 'the second draw follows the first')
  t.equal(await order.settled(secondDraw.next_xid), false, 'the gap before the second draw is open while the first runs')

  await first.commit()
  // Only this database's transactions count; an autovacuum worker of it may hold one a moment.
  const deadline = Date.now() + 10_000
  while (!(await order.settled(horizon.nextXid)) && Date.now() < deadline) await sleep(20)
  t.equal(await order.settled(horizon.nextXid), true, 'settled once it committed')
  t.equal(await order.settled(secondDraw.next_xid), true, 'and so is the gap before the second draw')
}

postgresTest('a transaction of another database does not hold a horizon back; one of this database does', async (t, adminUrl) => {
  const url = await createTestDatabase(t, adminUrl)
  const elsewhere = await createTestDatabase(t, adminUrl)
  const store = await openPostgresStore(url)
  t.teardown(() => store.close())
  const order = createStampOrder(store.db)

  // A write transaction of another database, open across the whole test, with an id below the horizon.
  const other = new pg.Client({ connectionString: elsewhere })
  await other.connect()
  t.teardown(() => other.end())
  await other.query('begin')
  const otherXid = Number((await other.query('select pg_current_xact_id()::text as xid')).rows[0].xid)
  const horizon = await order.horizon()
  t.ok(otherXid < horizon.nextXid, 'the other database\'s transaction is older than the horizon')
  t.equal(await order.settled(horizon.nextXid), true, 'settled: no transaction of this database runs')

  // One of this database holds it back, even one that has not drawn: the check cannot tell it from a drawer.
  const here = new pg.Client({ connectionString: url })
  await here.connect()
  t.teardown(() => here.end())
  await here.query('begin')
  await here.query('select pg_current_xact_id()')
  const later = await order.horizon()
  t.equal(await order.settled(later.nextXid), false, 'not settled while a transaction of this database runs')
  await here.query('commit')
  t.equal(await order.settled(later.nextXid), true, 'settled once it ended')
  await other.query('commit')
})
