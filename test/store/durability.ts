/**
 * Durability (issue #16): SQLite `normal` by default, `full` on request (`--durability full`);
 * PostgreSQL keeps the server's `synchronous_commit` unless `normal` is asked for.
 */
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { openStore } from '../../lib/store/open-store.js'
import { runCli } from '../fixtures/cli.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

t.test('synchronous is NORMAL by default and FULL with durability full', async (t) => {
  const dir = t.testdir()
  for (const [durability, expected] of [[undefined, 1], ['normal', 1], ['full', 2]] as const) {
    const store = await openSqliteStore(join(dir, `${durability ?? 'default'}.db`), durability === undefined ? {} : { durability })
    const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db)
    t.equal(rows[0]!.synchronous, expected, `durability ${durability ?? '(default)'}`)
    await store.close()
  }
})

t.test('devicehub serve --durability refuses anything but normal and full', async (t) => {
  const bad = runCli(['serve', '--port', '0', '--durability', 'fast'])
  t.not(await bad.exited, 0)
  t.match(bad.stderr(), /--durability/)
})

postgresTest('PostgreSQL: the server\'s synchronous_commit by default and with full; off on devicehub\'s connections with normal', async (t, pgAdminUrl) => {
  const url = await createTestDatabase(t, pgAdminUrl)
  const serverDefault = await openStore(url)
  const [{ setting }] = (await sql<{ setting: string }>`select current_setting('synchronous_commit') as setting`.execute(serverDefault.db)).rows as [{ setting: string }]
  await serverDefault.close()
  for (const [durability, expected] of [[undefined, setting], ['full', setting], ['normal', 'off']] as const) {
    const store = await openStore(url, durability === undefined ? {} : { durability })
    // Several connections at once, so more than one pooled connection answers.
    const answers = await Promise.all(Array.from({ length: 4 }, async () =>
      (await sql<{ s: string }>`select current_setting('synchronous_commit') as s, pg_sleep(0.05)`.execute(store.db)).rows[0]!.s))
    t.same(new Set(answers), new Set([expected]), `durability ${durability ?? '(default)'}: ${expected}`)
    await store.close()
  }
})
