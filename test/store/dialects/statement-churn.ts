import { spawn } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { sqliteDriverPackage } from '../../../lib/store/dialects/sqlite-driver.js'

const ROOT = join(import.meta.dirname, '..', '..', '..')

t.test('each Node.js line gets the better-sqlite3 that is safe on it', async (t) => {
  t.equal(sqliteDriverPackage('20.20.2'), 'better-sqlite3-node20', 'Node 20: better-sqlite3 12 (13 crashes there)')
  for (const version of ['22.23.3', '24.21.0', '26.10.0']) t.equal(sqliteDriverPackage(version), 'better-sqlite3', `Node ${version}: 13`)
})

// A native abort (SIGABRT) or segfault only shows in a child: this process must survive to report it.
t.test('thousands of distinct prepared statements under load and forced GC do not crash the process', async (t) => {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(ROOT, 'test', 'fixtures', 'statement-churn.ts'), '20'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.on('exit', (code, signal) => resolve([code, signal]))
  })
  t.equal(signal, null, `no signal (stderr: ${err.slice(0, 2000)})`)
  t.equal(code, 0, 'exit code 0')
  t.match(out, /^churn ok 11000\n$/, 'every statement ran and returned the right row')
})
