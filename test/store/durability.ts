/** SQLite durability (issue #16): `normal` by default, `full` on request (`--durability full`). */
import t from 'tap'
import { join } from 'node:path'
import { sql } from 'kysely'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { runCli } from '../fixtures/cli.js'

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
