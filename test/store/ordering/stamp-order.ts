/**
 * The stamp draw's `next_xid` (migrations 0006 and 0017) against real PostgreSQL transactions: a
 * gap, or a horizon, is settled only once every writer that drew up to it has ended. A snapshot's
 * `xmax` (the earlier `next_xid`) is one past the newest transaction that ended, so a writer still
 * running held it: the ordered bus resynchronised past its stamps and readers lost its rows.
 */
import pg from 'pg'
import type { Test } from 'tap'
import { openPostgresStore } from '../../../lib/store/dialects/postgres.js'
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

postgresTest('a horizon and a link settle only once every writer that drew up to them has ended', async (t, adminUrl) => {
  const url = await createTestDatabase(t, adminUrl)
  const store = await openPostgresStore(url)
  t.teardown(() => store.close())
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
  // Settled is cluster-wide: a transaction of another test may hold it back for a moment.
  const deadline = Date.now() + 10_000
  while (!(await order.settled(horizon.nextXid)) && Date.now() < deadline) await sleep(20)
  t.equal(await order.settled(horizon.nextXid), true, 'settled once it committed')
  t.equal(await order.settled(secondDraw.next_xid), true, 'and so is the gap before the second draw')
})
