/**
 * The warm-up leaves `process.nextTick` optimised before a server takes load (issue #26,
 * lib/next-tick-warmup.ts). V8's own status bits, read in a child with `--allow-natives-syntax`
 * and without the coverage collector (whose counters keep functions from being optimised).
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'

const run = promisify(execFile)
const MODULE = fileURLToPath(new URL('../lib/next-tick-warmup.ts', import.meta.url))
/** V8's `OptimizationStatus`: bit 4, optimised by any tier (TurboFan on Node 20, Maglev on 24). */
const OPTIMIZED = 1 << 4

const CHILD = `
const { warmNextTick } = await import(${JSON.stringify(MODULE)})
const status = () => %GetOptimizationStatus(process.nextTick)
const before = status()
const start = performance.now()
await warmNextTick()
const ms = performance.now() - start
await new Promise((resolve) => setTimeout(resolve, 20))
console.log(JSON.stringify({ before, after: status(), ms }))
`

t.test('nextTick is optimised once the warm-up has run', async (t) => {
  const env = { ...process.env }
  delete env.NODE_V8_COVERAGE
  const { stdout } = await run(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', CHILD], { env })
  const { before, after, ms } = JSON.parse(stdout) as { before: number, after: number, ms: number }
  t.equal(before & OPTIMIZED, 0, 'a fresh process runs nextTick unoptimised')
  t.not(after & OPTIMIZED, 0, `optimised after the warm-up (status ${after.toString(2)})`)
  t.comment(`the warm-up took ${ms.toFixed(1)} ms`)
})
