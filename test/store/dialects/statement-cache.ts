import type { Generated } from 'kysely'
import { Kysely, SqliteDialect } from 'kysely'
import t from 'tap'
import { openSqliteConnection } from '../../../lib/store/dialects/sqlite-driver.js'
import { cachingDatabase } from '../../../lib/store/dialects/statement-cache.js'

t.test('the same SQL text reuses one prepared statement', async (t) => {
  const raw = openSqliteConnection(':memory:')
  t.teardown(() => raw.close())
  const db = cachingDatabase(raw)
  const first = db.prepare('select 1 as x')
  t.equal(db.prepare('select 1 as x'), first)
  t.not(db.prepare('select 2 as x'), first)
  t.same(first.all([]), [{ x: 1 }])
  t.same(first.all([]), [{ x: 1 }], 'a statement runs again')
})

t.test('the cache is bounded: the least recently used statement is dropped', async (t) => {
  const raw = openSqliteConnection(':memory:')
  t.teardown(() => raw.close())
  const db = cachingDatabase(raw, 2)
  const a = db.prepare('select 1')
  const b = db.prepare('select 2')
  t.equal(db.prepare('select 1'), a, 'touching a makes b the oldest')
  db.prepare('select 3')
  t.equal(db.prepare('select 1'), a, 'a survived')
  t.not(db.prepare('select 2'), b, 'b was evicted and prepared again')
})

t.test('a schema change empties the cache and is not cached itself', async (t) => {
  const raw = openSqliteConnection(':memory:')
  t.teardown(() => raw.close())
  const db = cachingDatabase(raw)
  const select = db.prepare('select 1')
  const create = db.prepare('create table if not exists t (a integer)')
  create.run([])
  t.not(db.prepare('select 1'), select, 'prepared again after the schema change')
  t.not(db.prepare('create table if not exists t (a integer)'), create, 'DDL is prepared each time')
  const alter = db.prepare('  ALTER TABLE t ADD COLUMN b text')
  alter.run([])
  t.same(db.prepare('select * from t').all([]), [])
  t.same(db.prepare('pragma table_info(t)').all([]).map((row) => (row as { name: string }).name), ['a', 'b'])
})

t.test('Kysely runs reads, writes and schema changes through the cache', async (t) => {
  const db = new Kysely<{ items: { id: Generated<number>, name: string, extra?: string | null } }>({ dialect: new SqliteDialect({ database: cachingDatabase(openSqliteConnection(':memory:')) }) })
  t.teardown(() => db.destroy())
  await db.schema.createTable('items').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').execute()
  for (const name of ['a', 'b']) await db.insertInto('items').values({ name }).execute()
  const select = () => db.selectFrom('items').selectAll().orderBy('id').execute()
  t.same(await select(), [{ id: 1, name: 'a' }, { id: 2, name: 'b' }])
  await db.updateTable('items').set({ name: 'c' }).where('id', '=', 2).execute()
  t.same(await select(), [{ id: 1, name: 'a' }, { id: 2, name: 'c' }], 'a cached select sees the write')
  await db.schema.alterTable('items').addColumn('extra', 'text').execute()
  t.same(await select(), [{ id: 1, name: 'a', extra: null }, { id: 2, name: 'c', extra: null }], 'a cached select * sees the new column')
  const streamed: unknown[] = []
  for await (const row of db.selectFrom('items').select('name').orderBy('id').stream()) streamed.push(row)
  t.same(streamed, [{ name: 'a' }, { name: 'c' }])
})
