/**
 * Query templates on the SQLite connection itself (sqlite-direct.ts): direct inside a transaction
 * and outside one while none is open; outside one while one is open they wait for it, so they
 * neither see its rows nor are rolled back with it. A write of several templates
 * (`QueryTemplates.transact`) runs as one whole transaction at once under the same rule, and
 * leaves nothing behind when one of its statements fails. Real SQLite through Kysely.
 */
import { Kysely, sql } from 'kysely'
import t from 'tap'
import type { Test } from 'tap'
import { directSqlite } from '../../../lib/store/dialects/sqlite-direct.js'
import { openSqliteConnection } from '../../../lib/store/dialects/sqlite-driver.js'
import { cachingDatabase } from '../../../lib/store/dialects/statement-cache.js'
import type { QueryRunner, TemplateSteps } from '../../../lib/store/query-templates.js'
import { createQueryTemplates } from '../../../lib/store/query-templates.js'
import { createQueryTiming } from '../../../lib/store/query-timing.js'

interface Schema {
  items: { id: number, name: string }
  parents: { id: number }
  children: { id: number, parent: number }
}

async function open (t: Test) {
  const direct = directSqlite(cachingDatabase(openSqliteConnection(':memory:')))
  const db = new Kysely<Schema>({ dialect: direct.dialect })
  t.teardown(() => db.destroy())
  await sql`PRAGMA foreign_keys = ON`.execute(db)
  await sql`create table items (id integer primary key, name text not null)`.execute(db)
  await sql`create table parents (id integer primary key)`.execute(db)
  await sql`create table children (id integer primary key,
    parent integer not null references parents(id) deferrable initially deferred)`.execute(db)
  const timing = createQueryTiming()
  const timed: string[] = []
  timing.observe(({ operation, seconds }) => { if (seconds >= 0) timed.push(operation) })
  const templates = createQueryTemplates({ direct: direct.executor, timing })
  const insert = (h: Kysely<Schema>, id: number, name: string) =>
    templates.run(h, 'insert', (slot) => h.insertInto('items').values({ id: slot(0), name: slot(1) }), [id, name])
  const names = async (h: Kysely<Schema>) =>
    (await templates.run(h, 'names', () => h.selectFrom('items').select('name').orderBy('id'), [])).map((r) => r.name)
  /** Whether a text would run directly on `h` now (it returns rows) or wait (undefined). */
  const runsNow = (h: QueryRunner) => direct.executor.execute(h, 'select 1 as x', []) !== undefined
  /** Two rows in one write: `second` as the second row's name (null fails the NOT NULL after the first row is in). */
  const insertTwo = (h: Kysely<Schema>, id: number, second: string | null): Promise<string> => {
    function * steps (): TemplateSteps<string> {
      yield { key: 'insert', build: (slot) => h.insertInto('items').values({ id: slot(0), name: slot(1) }), values: [id, 'first'] }
      yield { key: 'insert', build: (slot) => h.insertInto('items').values({ id: slot(0), name: slot(1) }), values: [id + 1, second] }
      const rows = (yield { key: 'names', build: () => h.selectFrom('items').select('name').orderBy('id'), values: [] }) as Array<{ name: string }>
      return rows.map((r) => r.name).join(',')
    }
    let opened = false
    const written = templates.transact(h, steps, (body) => {
      opened = true
      return h.isTransaction ? body(h) : h.transaction().execute(body)
    })
    return written.then((value) => `${value}${opened ? ' (through a transaction)' : ''}`)
  }
  return { db, insert, insertTwo, names, runsNow, timed }
}

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

t.test('outside a transaction while none is open, a template runs directly', async (t) => {
  const { db, insert, names, runsNow, timed } = await open(t)
  t.ok(runsNow(db))
  await insert(db, 1, 'one')
  t.same(await names(db), ['one'])
  t.same(timed, ['insert', 'select'], 'a direct run is timed for the metrics like any query')
})

t.test('while a transaction is open, outside templates wait; its own run in it', async (t) => {
  const { db, insert, names, runsNow } = await open(t)
  let outsideRead: string[] | undefined
  let outsideWrite = false
  const rolledBack = db.transaction().execute(async (trx) => {
    t.notOk(runsNow(db), 'the store handle waits')
    t.ok(runsNow(trx), 'the transaction runs its own directly')
    await insert(trx, 1, 'in the transaction')
    t.same(await names(trx), ['in the transaction'], 'the transaction sees its row')
    void names(db).then((rows) => { outsideRead = rows })
    void insert(db, 2, 'outside').then(() => { outsideWrite = true })
    await ticks(5)
    t.equal(outsideRead, undefined, 'an outside read has not run inside the transaction')
    t.notOk(outsideWrite, 'an outside write has not run inside the transaction')
    throw new Error('roll back')
  })
  await t.rejects(rolledBack, /roll back/)
  await ticks(5)
  t.same(outsideRead, [], 'the outside read ran after the rollback: it never saw the row')
  t.ok(outsideWrite)
  t.same(await names(db), ['outside'], 'the outside write was not rolled back with the transaction')
  t.ok(runsNow(db), 'direct again once the transaction ended')
})

t.test('a commit that fails (a deferred foreign key) ends the transaction all the same', async (t) => {
  const { db, names, runsNow } = await open(t)
  const failed = db.transaction().execute(async (trx) => {
    await trx.insertInto('children').values({ id: 1, parent: 99 }).execute()
  })
  await t.rejects(failed, /FOREIGN KEY/i)
  t.ok(runsNow(db), 'direct again after the rollback that followed')
  t.same(await db.selectFrom('children').selectAll().execute(), [], 'nothing of it stayed')
  t.same(await names(db), [])
})

t.test('a transaction that cannot begin leaves no count behind', async (t) => {
  const { db, runsNow } = await open(t)
  await sql`begin`.execute(db)
  await t.rejects(db.transaction().execute(async () => {}), /within a transaction/)
  await sql`rollback`.execute(db)
  t.ok(runsNow(db))
})

t.test('a write of several templates runs as one transaction at once, and not at all when a statement fails', async (t) => {
  const { db, insertTwo, names, runsNow, timed } = await open(t)
  t.equal(await insertTwo(db, 1, 'second'), 'first,second', 'no transaction of Kysely\'s: the rows and the read in one go')
  t.same(timed, ['insert', 'insert', 'select'], 'each statement is timed for the metrics')
  await t.rejects(insertTwo(db, 3, null), /NOT NULL/)
  t.same(await names(db), ['first', 'second'], 'the failed write left not even its first row')
  t.ok(runsNow(db), 'no transaction was left open')
})

t.test('a write of several templates while a transaction is open waits for it, then runs in one of its own', async (t) => {
  const { db, insertTwo, names } = await open(t)
  let outside: string | undefined
  const rolledBack = db.transaction().execute(async (trx) => {
    await trx.insertInto('items').values({ id: 10, name: 'in the transaction' }).execute()
    void insertTwo(db, 1, 'second').then((value) => { outside = value })
    await ticks(5)
    t.equal(outside, undefined, 'it has not run inside the open transaction')
    throw new Error('roll back')
  })
  await t.rejects(rolledBack, /roll back/)
  await ticks(5)
  t.equal(outside, 'first,second (through a transaction)', 'it ran after the rollback, in a transaction it opened')
  t.same(await names(db), ['first', 'second'], 'and was not rolled back with the other')
})

t.test('inside a transaction, a write of several templates joins it', async (t) => {
  const { db, insertTwo, names } = await open(t)
  await t.rejects(db.transaction().execute(async (trx) => {
    t.equal(await insertTwo(trx, 1, 'second'), 'first,second (through a transaction)')
    throw new Error('roll back')
  }), /roll back/)
  t.same(await names(db), [], 'rolled back with the transaction it joined')
})
