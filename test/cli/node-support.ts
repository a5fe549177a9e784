import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { FIRST_SUPPORTED_MINOR, SUPPORTED_NODE_MAJORS, unsupportedNodeMessage } from '../../lib/cli/node-support.js'
import { ROOT } from '../fixtures/cli.js'

interface Run { code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string }

function run (node: string, args: string[]): Promise<Run> {
  // Without tap's NODE_OPTIONS (its process-info hook, which tap adds back to every spawn), as a user runs it.
  const child = spawn('env', ['-u', 'NODE_OPTIONS', node, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })))
}

function assertRefused (t: Test, result: Run, version: string): void {
  t.equal(result.signal, null, 'no native crash')
  t.equal(result.code, 1, 'exit code 1')
  t.equal(result.stdout, '', 'nothing on stdout')
  t.equal(result.stderr, `devicehub: Node.js ${version} is not supported; use Node.js 20, 22.13+, 24 or 26\n`, 'one clear line')
}

t.test('the supported lines are the even ones CI runs; everything else is refused by name', async (t) => {
  t.same(SUPPORTED_NODE_MAJORS, [20, 22, 24, 26])
  for (const version of ['20.0.0', '20.20.2', '22.13.0', '22.23.3', '24.21.0', '26.10.0']) t.equal(unsupportedNodeMessage(version), undefined, version)
  for (const version of ['18.20.8', '19.9.0', '21.7.3', '22.12.0', '23.11.1', '25.9.0', '27.0.0']) {
    t.equal(unsupportedNodeMessage(version), `devicehub: Node.js ${version} is not supported; use Node.js 20, 22.13+, 24 or 26`, version)
  }
  t.equal(unsupportedNodeMessage(), undefined, `this Node.js (${process.versions.node}) is supported`)
})

t.test('package.json engines names exactly the supported lines', async (t) => {
  const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
  t.equal(engines, SUPPORTED_NODE_MAJORS.map((major) => `^${major}.${FIRST_SUPPORTED_MINOR[major] ?? 0}.0`).join(' || '))
})

t.test('the CLI on an unsupported Node.js prints one line and exits 1 before loading anything', async (t) => {
  // The version is faked before the entry point runs, so the check is the bin's own.
  const pretend = "data:text/javascript,Object.defineProperty(process.versions,'node',{value:'21.7.3'})"
  assertRefused(t, await run(process.execPath, ['--import', pretend, '--import', 'tsx', join(ROOT, 'bin', 'devicehub.ts'), 'serve', '--port', '0']), '21.7.3')
})

t.test('the built CLI on a real unsupported Node.js (DEVICEHUB_TEST_UNSUPPORTED_NODE, set by .ci/run)', async (t) => {
  const node = process.env.DEVICEHUB_TEST_UNSUPPORTED_NODE
  if (node === undefined || node === '') return t.pass('DEVICEHUB_TEST_UNSUPPORTED_NODE not set')
  const bin = join(ROOT, 'dist', 'bin', 'devicehub.js')
  t.ok(existsSync(bin), 'built (npm run build)')
  const version = (await run(node, ['--version'])).stdout.trim().replace(/^v/, '')
  assertRefused(t, await run(node, [bin, 'serve', '--port', '0']), version)
})
