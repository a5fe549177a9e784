import { spawn } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { openSqliteConnection, sqliteDriverName, sqliteErrorCode } from '../../../lib/store/dialects/sqlite-driver.js'

const ROOT = join(import.meta.dirname, '..', '..', '..')

t.test('the driver follows the Node.js version: node:sqlite from 22.13, better-sqlite3 12 before', async (t) => {
  t.equal(sqliteDriverName('20.20.2'), 'devicehub-sqlite-node20')
  t.equal(sqliteDriverName('22.12.0'), 'devicehub-sqlite-node20', 'node:sqlite needs a flag before 22.13 (refused by the CLI)')
  for (const version of ['22.13.0', '22.23.3', '23.4.0', '24.21.0', '26.10.0']) t.equal(sqliteDriverName(version), 'node:sqlite', version)
})

t.test('SQLite errors carry the same result code names on either driver', async (t) => {
  const connection = openSqliteConnection(':memory:')
  t.teardown(() => connection.close())
  connection.exec('PRAGMA foreign_keys = ON')
  connection.exec('create table p (id integer primary key, name text unique)')
  connection.exec('create table c (id integer primary key, p integer references p (id))')
  connection.prepare('insert into p (id, name) values (?, ?)').run([1, 'a'])
  const codeOf = (sql: string, parameters: unknown[]): string | undefined => {
    try {
      connection.prepare(sql).run(parameters)
    } catch (error) {
      return sqliteErrorCode(error)
    }
    return 'no error'
  }
  t.equal(codeOf('insert into p (id, name) values (?, ?)', [2, 'a']), 'SQLITE_CONSTRAINT_UNIQUE')
  t.equal(codeOf('insert into p (id, name) values (?, ?)', [1, 'b']), 'SQLITE_CONSTRAINT_PRIMARYKEY')
  t.equal(codeOf('insert into c (p) values (?)', [9]), 'SQLITE_CONSTRAINT_FOREIGNKEY')
  t.equal(sqliteErrorCode(new Error('not SQLite')), undefined)
  t.equal(sqliteErrorCode(undefined), undefined)
})

t.test('rows, run results and streaming through the Kysely-shaped statements', async (t) => {
  const connection = openSqliteConnection(':memory:')
  t.teardown(() => connection.close())
  connection.exec('create table m (id integer primary key, body text)')
  const insert = connection.prepare('insert into m (body) values (?)')
  t.equal(insert.reader, false, 'an insert returns no rows')
  t.match(insert.run(['x']), { changes: 1, lastInsertRowid: 1 })
  const returning = connection.prepare('insert into m (body) values (?) returning id')
  t.equal(returning.reader, true, 'insert ... returning does')
  t.same(returning.all(['y']), [{ id: 2 }])
  t.same([...connection.prepare('select body from m where id > ? order by id').iterate([0])], [{ body: 'x' }, { body: 'y' }])
})

// Node 22 warns that node:sqlite is experimental on loading it; 24 and 26 do not. Only that warning is dropped.
t.test('loading the driver prints no ExperimentalWarning about SQLite; other warnings still show', async (t) => {
  const script = "process.emitWarning('something else', 'DevicehubTestWarning');" +
    "const { openSqliteConnection } = await import('./lib/store/dialects/sqlite-driver.ts');" +
    "openSqliteConnection(':memory:').close(); process.stdout.write('opened')"
  // As a user runs it: without tap's NODE_OPTIONS (which tap adds back to every spawn, and whose hook
  // silences warnings on Node 26).
  const child = spawn('env', ['-u', 'NODE_OPTIONS', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const code = await new Promise((resolve) => child.on('exit', resolve))
  t.equal(code, 0, `exit code 0 (stderr: ${err.slice(0, 500)})`)
  t.equal(out, 'opened')
  t.notMatch(err, /SQLite/, 'no warning about SQLite')
  t.match(err, /DevicehubTestWarning: something else/, `the process's own warnings are untouched (stderr: ${err.slice(0, 300)})`)
})
