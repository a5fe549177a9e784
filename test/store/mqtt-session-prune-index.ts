/**
 * Migration 0016 (issue #26): the MQTT session prune (`mqttSessions.dropExpired` without a key,
 * on SQLite on the event loop) finds the subscriptions past their deadline through
 * `expires_at` and those of lapsed holds through the primary key: it never walks every durable
 * subscription, which made it a 73-107 ms stall with 100,000 sessions; `down` drops the index.
 */
import t from 'tap'
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely'
import type { Database } from '../../lib/store/database.js'
import { openSqliteConnection } from '../../lib/store/dialects/sqlite-driver.js'
import { createMigrationProvider, migrateToLatest, sqliteMigrationDialect } from '../../lib/store/migrations/index.js'
import { createMqttSessionRepository } from '../../lib/store/repositories/mqtt-sessions.js'
import { planOf, recordingDatabase } from '../fixtures/sqlite-plans.js'
import type { RecordedQuery } from '../fixtures/sqlite-plans.js'

const INDEX = 'mqtt_subscriptions_expires_at_idx'
const LEASE = { expiryMs: 1000, until: 100_000 }

async function subscriptionIndexes (db: Kysely<unknown>): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'mqtt_subscriptions'`.execute(db)
  return rows.rows.map((r) => r.name)
}

/** 2,000 held sessions with a renewed lease, each with one subscription. */
async function heldSessions (t: Parameters<typeof recordingDatabase>[0]): Promise<{ db: Kysely<Database>, statements: RecordedQuery[] }> {
  const { db, statements } = await recordingDatabase(t, /^(select|delete)/i)
  await sql`pragma foreign_keys = off`.execute(db)
  const subscriptions = Array.from({ length: 2000 }, (_, i) => ({
    user_id: 1, client_id: `c-${i}`, topic: 'dh/command/#', qos: 1, cursor: null, created_at: 1000, expires_at: null
  }))
  const holds = subscriptions.map((s, i) => ({
    user_id: 1, client_id: s.client_id, holder: `a:${i}`, since: 1000, expiry_ms: LEASE.expiryMs, lease_until: LEASE.until
  }))
  for (let i = 0; i < subscriptions.length; i += 500) {
    await db.insertInto('mqtt_subscriptions').values(subscriptions.slice(i, i + 500)).execute()
    await db.insertInto('mqtt_session_holders').values(holds.slice(i, i + 500)).execute()
  }
  return { db, statements }
}

async function plans (db: Kysely<Database>, statements: RecordedQuery[]): Promise<string[]> {
  const found: string[] = []
  for (const { sql: text, parameters } of statements) found.push(await planOf(db as Kysely<unknown>, text, parameters))
  return found
}

t.test('a prune with nothing expired reads the deadline index and looks for one lapsed hold', async (t) => {
  const { db, statements } = await heldSessions(t)
  statements.length = 0
  t.equal(await createMqttSessionRepository(db).dropExpired(5000), 0)
  const found = await plans(db, statements)
  t.equal(found.length, 2, `two statements (${statements.map((s) => s.sql).join(' | ')})`)
  t.match(found[0], `USING INDEX ${INDEX} (expires_at<?)`, 'the deadlines: one range of the index')
  t.notOk(found.some((plan) => /SCAN mqtt_subscriptions/.test(plan)), `the subscriptions are never walked (${found.join(' | ')})`)
})

t.test('a prune deletes the expired and the lapsed through indexes', async (t) => {
  const { db, statements } = await heldSessions(t)
  const sessions = createMqttSessionRepository(db)
  await sessions.setExpiry({ userId: 1, clientId: 'c-7' }, 2000)
  await sessions.hold({ userId: 1, clientId: 'c-5' }, 'dead:5', 1000, { expiryMs: 1000, until: 1000 })
  statements.length = 0
  t.equal(await sessions.dropExpired(5000), 2, 'the one past its deadline, the one whose lease lapsed')
  const found = await plans(db, statements)
  t.notOk(found.some((plan) => /SCAN mqtt_subscriptions/.test(plan)), `the subscriptions are never walked (${found.join(' | ')})`)
  t.ok(found.some((plan) => plan.includes('mqtt_subscriptions_1 (user_id=? AND client_id=?)')), 'the lapsed: by primary key')
  t.same(await sessions.list({ userId: 1, clientId: 'c-5' }), [])
  t.same(await sessions.list({ userId: 1, clientId: 'c-7' }), [])
  t.equal(await sessions.holderOf({ userId: 1, clientId: 'c-5' }), undefined, 'the lapsed hold goes')
  const left = await db.selectFrom('mqtt_subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  t.equal(Number(left.n), 1998, 'the others stay')
})

t.test('down drops the index', async (t) => {
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openSqliteConnection(':memory:') }) })
  t.teardown(() => db.destroy())
  await migrateToLatest(db, sqliteMigrationDialect)
  t.ok((await subscriptionIndexes(db)).includes(INDEX), 'there after the migrations')
  const migrator = new Migrator({
    db, provider: createMigrationProvider(sqliteMigrationDialect), migrationTableName: 'devicehub_migrations', migrationLockTableName: 'devicehub_migrations_lock'
  })
  const { error, results } = await migrator.migrateTo('0015-presence-sweep-index')
  t.equal(error, undefined)
  t.equal(results?.at(-1)?.migrationName, '0016-mqtt-session-deadline-index')
  t.notOk((await subscriptionIndexes(db)).includes(INDEX), 'gone')
})
