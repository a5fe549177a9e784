/**
 * Hot statements compiled once (query-templates.ts): built on the first call only, each call's
 * values in their places, the template's own constants kept, one template per key, timed like
 * every other query. Real SQLite, and PostgreSQL when DEVICEHUB_TEST_PG_URL is set.
 */
import t from 'tap'
import type { Test } from 'tap'
import { sql } from 'kysely'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import type { KyselyStore } from '../../lib/store/kysely-store.js'
import { createQueryTemplates } from '../../lib/store/query-templates.js'
import { createQueryTiming } from '../../lib/store/query-timing.js'

async function check (t: Test, store: KyselyStore): Promise<void> {
  const timing = createQueryTiming()
  const seen: string[] = []
  timing.observe(({ operation }) => seen.push(operation))
  const templates = createQueryTemplates({ timing })
  let builds = 0
  const sum = (a: number, b: number, db = store.db): Promise<Array<{ total: number, label: string }>> => templates.run(db, 'sum', (slot) => {
    builds++
    return store.db.selectFrom(sql<{ x: number }>`(select 1 as x)`.as('one'))
      .select([sql<number>`cast(${slot(0)} as integer) + cast(${slot(1)} as integer) + cast(${100} as integer)`.as('total'), sql<string>`${'fixed'}`.as('label')])
  }, [a, b])
  t.same((await sum(1, 2)).map((r) => ({ total: Number(r.total), label: r.label })), [{ total: 103, label: 'fixed' }])
  t.same((await sum(20, 30)).map((r) => Number(r.total)), [150], 'the second call has its own values')
  await store.transaction(async (tx) => {
    t.same((await sum(5, 5, (tx as KyselyStore).db)).map((r) => Number(r.total)), [110], 'the same text in a transaction')
  })
  t.equal(builds, 1, 'built once')
  t.same(seen, ['select', 'select', 'select'], 'timed as selects')
  const other = await templates.run(store.db, 'other', () => store.db.selectFrom(sql<{ y: number }>`(select 7 as y)`.as('seven')).selectAll(), [])
  t.same(other.map((r) => Number(r.y)), [7], 'another key, another template')
}

t.test('SQLite', async (t) => {
  const store = await openSqliteStore(':memory:')
  t.teardown(() => store.close())
  await check(t, store)
})

t.test('PostgreSQL', { skip: process.env.DEVICEHUB_TEST_PG_URL === undefined ? 'DEVICEHUB_TEST_PG_URL not set' : false }, async (t) => {
  const { openPostgresStore } = await import('../../lib/store/dialects/postgres.js')
  const store = await openPostgresStore(process.env.DEVICEHUB_TEST_PG_URL!)
  t.teardown(() => store.close())
  await check(t, store)
})
