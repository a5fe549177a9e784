/**
 * Migration 0015 (issue #26): the offline sweep's read (`presence.listExpired`, every few
 * seconds, on SQLite on the event loop) finds the online devices through `(online, last_seen)`,
 * so the devices that went offline long ago are not walked on every sweep; `down` drops it.
 */
import t from 'tap'
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely'
import { openSqliteConnection } from '../../lib/store/dialects/sqlite-driver.js'
import { createMigrationProvider, migrateToLatest, sqliteMigrationDialect } from '../../lib/store/migrations/index.js'
import { createPresenceRepository } from '../../lib/store/repositories/presence.js'
import { planOf, recordingDatabase } from '../fixtures/sqlite-plans.js'

const INDEX = 'device_presence_online_last_seen_idx'

async function presenceIndexes (db: Kysely<unknown>): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'device_presence'`.execute(db)
  return rows.rows.map((r) => r.name)
}

t.test('the sweep reads the online devices through (online, last_seen), the oldest first', async (t) => {
  const { db, statements: selects } = await recordingDatabase(t)
  t.ok((await presenceIndexes(db as Kysely<unknown>)).includes(INDEX), 'the index is there')
  await sql`pragma foreign_keys = off`.execute(db)
  // 2,000 devices seen long ago: one in 100 still online, the others gone offline.
  const rows = Array.from({ length: 2000 }, (_, i) => ({ device_id: `d-${i}`, last_seen: 1000 + i, online: i % 100 === 0 ? 1 : 0 }))
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('device_presence').values(rows.slice(i, i + 500)).execute()

  selects.length = 0
  const expired = await createPresenceRepository(db).listExpired(1_000_000, 5)
  t.same(expired, ['d-0', 'd-100', 'd-200', 'd-300', 'd-400'], 'the online ones, oldest first, up to the limit')
  t.equal(selects.length, 1)
  const { sql: text, parameters } = selects[0]!
  const details = await planOf(db as Kysely<unknown>, text, parameters)
  t.match(details, `USING INDEX ${INDEX} (online=? AND last_seen<?)`, `one range of the index (${details})`)
  t.notMatch(details, /TEMP B-TREE/, 'no sort')
})

t.test('down drops the index', async (t) => {
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openSqliteConnection(':memory:') }) })
  t.teardown(() => db.destroy())
  await migrateToLatest(db, sqliteMigrationDialect)
  const migrator = new Migrator({
    db, provider: createMigrationProvider(sqliteMigrationDialect), migrationTableName: 'devicehub_migrations', migrationLockTableName: 'devicehub_migrations_lock'
  })
  const { error, results } = await migrator.migrateTo('0014-mqtt-session-leases')
  t.equal(error, undefined)
  t.equal(results?.at(-1)?.migrationName, '0015-presence-sweep-index')
  const left = await presenceIndexes(db)
  t.notOk(left.includes(INDEX), 'gone')
  t.ok(left.includes('device_presence_last_seen_idx'), 'the last_seen index (the device list filter) stays')
})
