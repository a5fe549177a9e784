/**
 * Background WAL checkpoints (lib/store/dialects/sqlite-checkpointer.ts, issue #26): the log is
 * copied into the file by a worker thread, so it starts over instead of growing until a commit
 * checkpoints on the event loop; closing the store stops the worker first and leaves no log; a
 * worker that cannot work says so once and crashes nothing.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import t from 'tap'
import { CHECKPOINT_INTERVAL_MS, startCheckpointer } from '../../../lib/store/dialects/sqlite-checkpointer.js'
import { WAL_CHECKPOINT_PAGES, openSqliteStore } from '../../../lib/store/dialects/sqlite.js'

const PAGE = 4096

t.test('the log starts over between bursts instead of growing, and is gone after close', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-checkpointer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'hub.db')
  const store = await openSqliteStore(file)
  await sql`create table filler (x blob)`.execute(store.db)
  const burst = async () => {
    // A few hundred pages in one transaction: far below the autocheckpoint (16,000), so only the worker checkpoints.
    await store.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 200; i++) await sql`insert into filler (x) values (randomblob(3000))`.execute(tx)
    })
  }
  const walPages = () => statSync(`${file}-wal`).size / PAGE
  const bursts = 5
  await burst()
  const first = walPages()
  for (let i = 1; i < bursts; i++) {
    await sleep(CHECKPOINT_INTERVAL_MS * 3)
    await burst()
  }
  t.ok(first * bursts < WAL_CHECKPOINT_PAGES, `${bursts} bursts of ${first} pages stay below the autocheckpoint`)
  const last = walPages()
  t.ok(last <= first * 1.5, `the log holds about one burst (${last} pages after ${bursts} bursts of ${first})`)
  const rows = await sql<{ n: number }>`select count(*) as n from filler`.execute(store.db)
  t.equal(Number(rows.rows[0]!.n), bursts * 200, 'every row is there')
  await store.close()
  t.notOk(existsSync(`${file}-wal`), 'closing stops the worker first: the last connection removes the log')

  const again = await openSqliteStore(file)
  const reread = await sql<{ n: number }>`select count(*) as n from filler`.execute(again.db)
  t.equal(Number(reread.rows[0]!.n), bursts * 200, 'and reopening reads every row')
  await again.close()
})

t.test('a worker that cannot open the file warns once and crashes nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-checkpointer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const warnings: string[] = []
  const onWarning = (warning: Error) => { if (warning.name === 'DevicehubWarning') warnings.push(warning.message) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  // A directory is not a database: the worker's open fails.
  const checkpointer = startCheckpointer(dir, 20)
  for (let i = 0; i < 100 && warnings.length === 0; i++) await sleep(20)
  await sleep(100)
  t.equal(warnings.length, 1, 'one warning')
  t.match(warnings[0], /stopped \((SQLITE_CANTOPEN|.*open.*)\)/i, 'naming why the worker stopped')
  t.match(warnings[0], /background WAL checkpoints of .* stopped/)
  await checkpointer.stop()
  t.pass('stop resolves after the worker failed')
})

t.test('a store left open does not keep the process alive', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-checkpointer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const sqlite = fileURLToPath(new URL('../../../lib/store/dialects/sqlite.ts', import.meta.url))
  const script = join(dir, 'left-open.mts')
  writeFileSync(script, `import { openSqliteStore } from ${JSON.stringify(sqlite)}
await openSqliteStore(${JSON.stringify(join(dir, 'open.db'))})
console.log('opened')
`)
  const started = Date.now()
  const { code, stdout } = await new Promise<{ code: number | null, stdout: string }>((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', script], { timeout: 30_000 }, (error, out) => {
      resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, stdout: out })
    })
    child.stdin?.end()
  })
  t.equal(stdout.trim(), 'opened')
  t.equal(code, 0, 'the process ends by itself')
  t.ok(Date.now() - started < 30_000, 'before the 30 s timeout')
})
