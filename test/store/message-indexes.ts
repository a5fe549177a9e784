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
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
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

t.test('0018: messages are pruned by their last stamp, rows written before it by stored_at; no full stored_at index', async (t) => {
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openSqliteConnection(':memory:') }) })
  t.teardown(() => db.destroy())
  const migrator = new Migrator({ db, provider: createMigrationProvider(sqliteMigrationDialect), migrationTableName: 'devicehub_migrations', migrationLockTableName: 'devicehub_migrations_lock' })
  t.equal((await migrator.migrateTo('0017-draw-xid')).error, undefined)
  const DAY = 86_400_000
  const now = Date.UTC(2024, 0, 31)
  const cutoff = now - 30 * DAY
  const write = {
    notifications: (name: string, storedAt: number | null, stamp: number): Promise<unknown> => sql`insert into notifications
      (device_id, network_id, device_type_id, notification, parameters, timestamp, stored_at, clock_ts)
      values ('d', 1, 1, ${name}, null, ${stamp}, ${storedAt}, ${stamp})`.execute(db),
    commands: (name: string, storedAt: number | null, stamp: number): Promise<unknown> => sql`insert into commands
      (device_id, network_id, device_type_id, command, timestamp, last_updated, clock_ts, stored_at)
      values ('d', 1, 1, ${name}, ${stamp}, ${stamp}, ${stamp}, ${storedAt})`.execute(db)
  }
  for (const table of ['notifications', 'commands'] as const) {
    // Written before 0018: stored_at is the write time; before 0004 the stamp was the client's timestamp.
    await write[table]('legacy-old-future-stamp', now - 60 * DAY, Date.UTC(9999, 0, 1))
    await write[table]('legacy-new-1970-stamp', now - DAY, 0)
    await write[table]('before-0002', null, now - 60 * DAY)
  }
  t.equal((await migrator.migrateToLatest()).error, undefined)

  for (const table of ['notifications', 'commands'] as const) {
    const all = await sql<{ name: string, sql: string }>`select name, sql from sqlite_master where type = 'index' and tbl_name = ${table}`.execute(db)
    t.notOk(all.rows.some((r) => r.name === `${table}_stored_at_idx`), `${table}: the full stored_at index is gone`)
    t.match(all.rows.find((r) => r.name === `${table}_stored_at_legacy_idx`)?.sql, /where "stored_at" is not null/i, `${table}: a partial index holds the older rows`)
    // Written after 0018 (as the repositories write them): no stored_at, the stamp says when.
    await write[table]('new-old', null, cutoff - 2_000)
    await write[table]('new-inside-the-window', null, cutoff - 500)
    await write[table]('new-recent', null, now)

    t.equal(await pruneMessages(db as never, table, cutoff, 100), 3)
    const name = table === 'commands' ? 'command' : 'notification'
    const left = await sql<{ name: string }>`select ${sql.ref(name)} as name from ${sql.table(table)} order by id`.execute(db)
    t.same(left.rows.map((r) => r.name), ['legacy-new-1970-stamp', 'new-inside-the-window', 'new-recent'],
      `${table}: gone, a legacy row by its write time, a pre-0002 row and a new one by stamp; kept, a stamp less than the client window before the cutoff`)
  }

  t.equal((await migrator.migrateTo('0017-draw-xid')).error, undefined)
  for (const table of ['notifications', 'commands'] as const) {
    const restored = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = ${table}`.execute(db)
    t.ok(restored.rows.some((r) => r.name === `${table}_stored_at_idx`), `${table}: down builds the full index again`)
    const unset = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where stored_at is null`.execute(db)
    t.equal(Number(unset.rows[0]!.n), 0, `${table}: and gives rows written since their stamp as stored_at`)
  }
})

t.test('0018: an update takes a command stored before it out of the partial index; writes leave stored_at empty', async (t) => {
  const store = await openSqliteStore(':memory:')
  t.teardown(() => store.close())
  const db = store.db as unknown as Kysely<unknown>
  const networkId = await store.networks.insert({ name: 'n', description: null })
  const deviceTypeId = await store.deviceTypes.insert({ name: 't', description: null })
  await store.devices.insert({ id: 'd', name: 'd', data: null, networkId, deviceTypeId, isBlocked: false })
  const base = { deviceId: 'd', networkId, deviceTypeId, parameters: null }
  const notification = await store.notifications.insert({ ...base, notification: 'n' }, Date.now())
  const command = await store.commands.insert({ ...base, command: 'c', userId: null, lifetime: null, status: null, result: null }, Date.now())
  const storedAt = async (table: string, id: number): Promise<unknown> =>
    (await sql<{ stored_at: unknown }>`select stored_at from ${sql.table(table)} where id = ${id}`.execute(db)).rows[0]!.stored_at
  t.equal(await storedAt('notifications', notification.id), null, 'a notification insert leaves it empty')
  t.equal(await storedAt('commands', command.id), null, 'a command insert leaves it empty')
  // As if stored before 0018.
  await sql`update commands set stored_at = 1 where id = ${command.id}`.execute(db)
  await store.commands.update('d', command.id, { status: 'Done' }, Date.now())
  t.equal(await storedAt('commands', command.id), null, 'an update empties it: the row goes by its last_updated now')
})
