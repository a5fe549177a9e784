/**
 * The message writes run as server-side prepared statements on PostgreSQL (issue #26), and only
 * they: a connection holds one named statement per marked text (one per small batch size, one for
 * every larger one), nothing else Kysely sends is prepared, and small batches keep a generic plan.
 */
import { sql } from 'kysely'
import { openPostgresStore } from '../../../lib/store/dialects/postgres.js'
import { PREPARED_MARK, prepared } from '../../../lib/store/dialects/prepared-statements.js'
import { createQueryTemplates } from '../../../lib/store/query-templates.js'
import { pgInsertNotifications } from '../../../lib/store/repositories/pg-message-writes.js'
import { postgresTest } from '../../fixtures/pg-database.js'
import { dropSchema, uniqueSchemaName } from '../../fixtures/store.js'

postgresTest('prepared statements on PostgreSQL', async (t, url) => {
  const schema = uniqueSchemaName()
  const store = await openPostgresStore(url, { schema, maxConnections: 2 })
  t.teardown(async () => {
    await store.close()
    await dropSchema(url, schema)
  })
  const networkId = await store.networks.insert({ name: 'Lab', description: null })
  const deviceTypeId = await store.deviceTypes.insert({ name: 'Sensor', description: null })
  await store.devices.insert({ id: 'dev-1', name: 'one', data: null, networkId, deviceTypeId, isBlocked: false })
  const templates = createQueryTemplates()
  const input = (i: number) => ({ notification: 'temp', deviceId: 'dev-1', networkId, deviceTypeId, parameters: { i } })

  await store.db.connection().execute(async (db) => {
    const held = async () => (await sql<{ name: string, statement: string }>`select name, statement from pg_prepared_statements`
      .execute(db)).rows
    t.same(await held(), [], 'a fresh connection holds no prepared statement')

    // More than five runs: PostgreSQL may switch to a generic plan, which must give the same rows.
    let written = 0
    for (const size of [1, 3, 1, 7, 2, 1, 4, 1]) {
      const rows = await pgInsertNotifications(db, templates, Array.from({ length: size }, (_, i) => input(written + i)), Date.now(),
        { channel: 'devicehub_prepared_test', drawn: () => {} })
      t.same(rows.map((r) => r.parameters), Array.from({ length: size }, (_, i) => ({ i: written + i })), `a batch of ${size} is written in order`)
      written += size
    }
    const statements = await held()
    // Up to three rows travel as values, a text per row count (pg-message-writes.ts, `inputRows`).
    t.equal(statements.length, 4, 'four named statements: one, two and three rows, and every larger batch size')
    for (const statement of statements) {
      t.match(statement.name, /^dh_[0-9a-f]{20}$/)
      t.ok(statement.statement.startsWith(PREPARED_MARK), 'and it is a marked write')
    }

    const read = await sql<{ n: number }>`select count(*)::int as n from notifications`.execute(db)
    t.equal(read.rows[0]!.n, written, 'every row is stored')
    t.equal((await held()).length, 4, 'an unmarked query is not prepared')

    // PostgreSQL plans a prepared statement for its parameters five times, then keeps the generic
    // plan unless custom ones look cheaper. For small batches as arrays they always did: every
    // run was planned again, a third of a one-row write's database CPU.
    for (const size of [1, 2, 3]) {
      for (let run = 0; run < 8; run++) {
        await pgInsertNotifications(db, templates, Array.from({ length: size }, (_, i) => input(written + i)), Date.now(), { channel: 'devicehub_prepared_test', drawn: () => {} })
        written += size
      }
    }
    const plans = await sql<{ statement: string, generic_plans: string, custom_plans: string }>`select statement, generic_plans,
      custom_plans from pg_prepared_statements where statement like '%values%'`.execute(db)
    t.equal(plans.rows.length, 3, 'the three small texts')
    for (const row of plans.rows) {
      t.ok(Number(row.generic_plans) >= 3 && Number(row.custom_plans) <= 5, `a small batch keeps its generic plan (${row.generic_plans} generic, ${row.custom_plans} custom)`)
    }

    const marked = await sql<{ v: number }>`${prepared()}select ${41}::int + 1 as v`.execute(db)
    t.equal(marked.rows[0]!.v, 42, 'a marked query runs with its parameters')
    t.equal((await held()).length, 5, 'and is prepared once')
    await sql`${prepared()}select ${1}::int + 1 as v`.execute(db)
    t.equal((await held()).length, 5, 'the same text again reuses it')
  })
})
