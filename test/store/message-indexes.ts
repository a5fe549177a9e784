/**
 * Migration 0013 (issue #26): the messages' `(device_id, timestamp)` indexes are gone, `down`
 * builds them again, and the reads of one device's messages still find theirs (the plan names
 * the `(device_id, clock_ts)` index, not a scan). The background deletes (retention, a deleted
 * device's history) find their rows in an index too: a scan or sort runs on the event loop.
 */
import t from 'tap'
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely'
import { openSqliteConnection } from '../../lib/store/dialects/sqlite-driver.js'
import { createMigrationProvider, migrateToLatest, sqliteMigrationDialect } from '../../lib/store/migrations/index.js'
import { pruneMessages, purgeDeviceHistory } from '../../lib/store/repositories/message-clock.js'
import { planOf, recordingDatabase } from '../fixtures/sqlite-plans.js'

async function indexes (db: Kysely<unknown>): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name like '%device_%' order by name`.execute(db)
  return rows.rows.map((r) => r.name)
}

t.test('0013 drops the (device_id, timestamp) indexes; down builds them again', async (t) => {
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openSqliteConnection(':memory:') }) })
  t.teardown(() => db.destroy())
  await migrateToLatest(db, sqliteMigrationDialect)
  const after = await indexes(db)
  t.notOk(after.includes('notifications_device_timestamp_idx'), 'notifications: gone')
  t.notOk(after.includes('commands_device_timestamp_idx'), 'commands: gone')
  t.ok(after.includes('notifications_device_clock_ts_idx'))

  for (const table of ['notifications', 'commands']) {
    const details = await planOf(db, `select * from ${table} where device_id = 'd1' and clock_ts > 5 order by clock_ts, id limit 100`)
    t.match(details, `USING INDEX ${table}_device_clock_ts_idx`, `${table}: one device's read uses (device_id, clock_ts)`)
  }

  const migrator = new Migrator({ db, provider: createMigrationProvider(sqliteMigrationDialect), migrationTableName: 'devicehub_migrations', migrationLockTableName: 'devicehub_migrations_lock' })
  // Down to the migration before 0013 (later ones are undone first).
  const { error, results } = await migrator.migrateTo('0012-mqtt-session-expiry')
  t.equal(error, undefined)
  t.equal(results?.at(-1)?.migrationName, '0013-message-device-index')
  const restored = await indexes(db)
  t.ok(restored.includes('notifications_device_timestamp_idx'))
  t.ok(restored.includes('commands_device_timestamp_idx'))
})

t.test('retention and device purges look their rows up in an index: no scan of the table, no sort', async (t) => {
  const { db, statements: selects } = await recordingDatabase(t)
  for (const table of ['notifications', 'commands'] as const) {
    selects.length = 0
    t.equal(await pruneMessages(db, table, 1_000, 500), 0)
    t.equal(await purgeDeviceHistory(db, table, 'd1', 7, 500), 0)
    t.equal(await purgeDeviceHistory(db, table, 'd1', null, 500), 0)
    t.equal(selects.length, 3, `${table}: each delete found its rows with one select`)
    for (const { sql: text, parameters } of selects) {
      const details = await planOf(db as Kysely<unknown>, text, parameters)
      t.match(details, /USING (COVERING )?INDEX/, `${table}: ${text} uses an index (${details})`)
      t.notMatch(details, new RegExp(`SCAN ${table}|TEMP B-TREE`), `${table}: neither scans nor sorts (${details})`)
    }
  }
})
