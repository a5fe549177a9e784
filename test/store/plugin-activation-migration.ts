/**
 * Migration 0019 (plugins.activation_cursor): safe to run again, as every migration from 0017
 * on (PostgreSQL's repeat is test/store/ordering/stamp-order.ts), and down removes the column.
 */
import t from 'tap'
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely'
import { openSqliteConnection } from '../../lib/store/dialects/sqlite-driver.js'
import { createMigrationProvider, migrateToLatest, sqliteMigrationDialect } from '../../lib/store/migrations/index.js'

async function columns (db: Kysely<unknown>): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from pragma_table_info('plugins')`.execute(db)
  return rows.rows.map((r) => r.name)
}

t.test('0019 adds activation_cursor, runs again without harm, and down drops it', async (t) => {
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openSqliteConnection(':memory:') }) })
  t.teardown(() => db.destroy())
  await migrateToLatest(db, sqliteMigrationDialect)
  t.ok((await columns(db)).includes('activation_cursor'))

  await sql`delete from devicehub_migrations where name = '0019-plugin-activation-cursor'`.execute(db)
  const again = await migrateToLatest(db, sqliteMigrationDialect)
  t.same(again.results?.map((r) => [r.migrationName, r.status]), [['0019-plugin-activation-cursor', 'Success']], 'ran again')
  t.equal((await columns(db)).filter((name) => name === 'activation_cursor').length, 1)

  const migrator = new Migrator({
    db,
    provider: createMigrationProvider(sqliteMigrationDialect),
    migrationTableName: 'devicehub_migrations',
    migrationLockTableName: 'devicehub_migrations_lock'
  })
  const down = await migrator.migrateTo('0018-purge-by-stamp')
  t.equal(down.error, undefined)
  t.notOk((await columns(db)).includes('activation_cursor'), 'down drops it')
})
