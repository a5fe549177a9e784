/**
 * The SQLite writer thread (lib/store/dialects/sqlite-writer.ts, issue #26): a write transaction
 * of query templates runs on the worker's connection while the event loop goes on; the main
 * connection meanwhile reads the last commit and its writes wait for the turn; a failing
 * statement undoes the whole transaction and comes back with SQLite's code; a writer that
 * stopped leaves the writes to the main connection. Real SQLite files, real worker threads.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Kysely, sql } from 'kysely'
import t from 'tap'
import type { Test } from 'tap'
import { directSqlite } from '../../../lib/store/dialects/sqlite-direct.js'
import { openSqliteConnection, sqliteErrorCode } from '../../../lib/store/dialects/sqlite-driver.js'
import { startSqliteWriter } from '../../../lib/store/dialects/sqlite-writer.js'
import { cachingDatabase } from '../../../lib/store/dialects/statement-cache.js'
import type { TemplateCall, TemplateWrite } from '../../../lib/store/query-templates.js'
import { createQueryTemplates } from '../../../lib/store/query-templates.js'

interface Schema {
  items: { id: number, name: string }
}

/** Rows SQLite counts through before it answers: a statement that keeps the writer busy for a while. */
const SLOW_ROWS = 3_000_000

async function open (t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-writer-'))
  const file = join(dir, 'hub.db')
  const connection = openSqliteConnection(file)
  connection.exec('PRAGMA journal_mode = WAL')
  connection.exec('create table items (id integer primary key, name text not null)')
  const writer = startSqliteWriter(file, { synchronous: 'NORMAL' })
  const direct = directSqlite(cachingDatabase(connection), writer)
  const db = new Kysely<Schema>({ dialect: direct.dialect })
  t.teardown(async () => {
    await direct.stopWriter()
    await db.destroy()
    rmSync(dir, { recursive: true, force: true })
  })
  const templates = createQueryTemplates({ direct: direct.executor })
  const insert = (id: number, name: string): TemplateCall =>
    ({ key: 'insert', build: (slot) => db.insertInto('items').values({ id: slot(0), name: slot(1) }), values: [id, name] })
  const slow: TemplateCall = {
    key: 'slow',
    build: (slot) => db.selectNoFrom(sql<number>`(with recursive c(x) as (select 1 union all select x + 1 from c where x < ${slot(0)})
      select count(*) from c)`.as('n')),
    values: [SLOW_ROWS]
  }
  const write = (calls: TemplateCall[]): Promise<number> => {
    const whole: TemplateWrite<number> = { calls, finish: (rows) => rows.length }
    return templates.transact(db, whole, () => Promise.reject(new Error('not through a Kysely transaction')))
  }
  /** What the main connection does with a text now: its rows, or undefined (it waits for the turn). */
  const now = (text: string) => direct.executor.execute(db, text, []) as unknown[] | undefined
  const names = async () => (await db.selectFrom('items').select('name').orderBy('id').execute()).map((r) => r.name)
  return { direct, insert, slow, write, now, names, writer }
}

t.test('a write runs on the writer: the event loop goes on, reads see the last commit, writes wait', async (t) => {
  const { insert, slow, write, now, names } = await open(t)
  await write([insert(1, 'before')])
  let during: { read: unknown, write: unknown } | undefined
  // A timer that fires while the transaction is in flight: the event loop was not held by it.
  const timer = sleep(20).then(() => {
    during = { read: now('select count(*) as n from items'), write: now("insert into items (id, name) values (9, 'x')") }
  })
  const written = write([insert(2, 'first'), slow, insert(3, 'second')])
  await timer
  t.same(during?.read, [{ n: 1 }], 'a read ran at once, on the last commit: none of the rows in flight')
  t.equal(during?.write, undefined, 'a write waits for the turn (it would wait for the writer\'s lock)')
  t.equal(await written, 3, 'each statement answered its rows')
  t.same(await names(), ['before', 'first', 'second'], 'all committed together')
})

t.test('a statement that fails undoes the whole transaction and comes back with SQLite\'s code', async (t) => {
  const { insert, write, names } = await open(t)
  await write([insert(1, 'one')])
  const error = await write([insert(2, 'two'), insert(1, 'again')]).then(() => undefined, (e: unknown) => e)
  t.equal(sqliteErrorCode(error), 'SQLITE_CONSTRAINT_PRIMARYKEY', 'the store tells the constraint apart, as on the main connection')
  t.same(await names(), ['one'], 'the first row of the failed transaction is not there')
  await write([insert(2, 'two')])
  t.same(await names(), ['one', 'two'], 'the writer goes on')
})

t.test('stopping waits for the transaction in flight; later writes run on the main connection', async (t) => {
  const { direct, insert, slow, write, names, writer } = await open(t)
  const written = write([insert(1, 'in flight'), slow])
  await sleep(10)
  await direct.stopWriter()
  t.equal(await written, 2, 'the transaction in flight finished first')
  t.notOk(writer.alive, 'the writer is stopped')
  await write([insert(2, 'after')])
  t.same(await names(), ['in flight', 'after'], 'a later write ran on the main connection')
})
