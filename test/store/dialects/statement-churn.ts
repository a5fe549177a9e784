import { spawn } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'

const ROOT = join(import.meta.dirname, '..', '..', '..')

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
