import t from 'tap'
import pg from 'pg'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { WAL_CHECKPOINT_PAGES, openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { createCli } from '../../lib/cli/create-cli.js'
import { describeLocation, isPostgresUrl, openStore } from '../../lib/store/open-store.js'
import { dropSchema, uniqueSchemaName } from '../fixtures/store.js'
import { postgresTest } from '../fixtures/pg-database.js'

t.test('postgres:// and postgresql:// URLs pick PostgreSQL', async (t) => {
  t.ok(isPostgresUrl('postgres://u@h/db'))
  t.ok(isPostgresUrl('POSTGRESQL://u@h/db'))
  t.notOk(isPostgresUrl('./postgres.db'))
  t.notOk(isPostgresUrl(':memory:'))
  t.equal(describeLocation('postgres://user:secret@db:5432/x'), 'postgres://user:****@db:5432/x')
})

t.test('a SQLite location opens SQLite', async (t) => {
  const store = await openStore(':memory:')
  t.teardown(() => store.close())
  t.equal(store.dialect, 'sqlite')
})

t.test('a SQLite file is in WAL mode and commits checkpoint only past 16,000 WAL pages (issues #25, #26)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-wal-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const store = await openSqliteStore(join(dir, 'wal.db'))
  t.teardown(() => store.close())
  const pragma = async (name: string): Promise<unknown> => Object.values((await sql.raw(`PRAGMA ${name}`).execute(store.db)).rows[0] as object)[0]
  t.equal(await pragma('journal_mode'), 'wal')
  t.equal(Number(await pragma('wal_autocheckpoint')), WAL_CHECKPOINT_PAGES)
  t.equal(WAL_CHECKPOINT_PAGES, 16_000)
})


postgresTest('openStore and `devicehub migrate` on PostgreSQL', async (t, url) => {
  /** A URL whose connections use a fresh schema of their own (the URL's `options` parameter). */
  const schemaUrl = async (t: { teardown(fn: () => unknown): void }): Promise<string> => {
    const schema = uniqueSchemaName()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query(`create schema ${schema}`)
    await client.end()
    t.teardown(() => dropSchema(url, schema))
    const located = new URL(url)
    located.searchParams.set('options', `-c search_path=${schema}`)
    return located.toString()
  }

  t.test('openStore opens and migrates a PostgreSQL URL into its search_path', async (t) => {
    const location = await schemaUrl(t)
    const store = await openStore(location)
    t.teardown(() => store.close())
    t.equal(store.dialect, 'postgres')
    const id = await store.networks.insert({ name: 'n', description: null })
    t.same(await store.networks.findById(id), { id, name: 'n', description: null })
  })

  t.test('`devicehub migrate --db postgres://...` migrates and reports', async (t) => {
    const location = await schemaUrl(t)
    const out: string[] = []
    const err: string[] = []
    const cli = createCli({ out: (l) => out.push(l), err: (l) => err.push(l), env: {} })
    await cli.parseAsync(['node', 'devicehub', 'migrate', '--db', location])
    // A new schema: it says what it created (#27); the second run below finds nothing to apply.
    t.equal(out.length, 1)
    t.ok(out[0]!.startsWith(`Database ${describeLocation(location)} was empty: created every table (`), out[0]!)
    t.same(err, [])
    const store = await openStore(location, { migrate: false })
    t.teardown(() => store.close())
    t.equal(await store.users.count({}), 0, 'the tables exist')
    // Running it again is a no-op.
    await createCli({ out: (l) => out.push(l), err: (l) => err.push(l), env: {} }).parseAsync(['node', 'devicehub', 'migrate', '--db', location])
    t.equal(out.length, 2)
    t.match(out[1], /is up to date \(\d+ migrations, the last \d{4}-[\w-]+\); nothing to apply\./)
  })
})
