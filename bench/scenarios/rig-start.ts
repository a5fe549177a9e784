/**
 * (e) `rig`: how long `createTestRig()` takes, in one process as a test file would use it: the
 * first start (module and schema compilation included) and 50 more, each followed by a device
 * registration and `close()`. Wall time and the process's CPU time per start.
 */
import { createTestRig } from '../../lib/testing/index.js'

const RUNS = 50

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

export async function rigStart (): Promise<void> {
  const wall: number[] = []
  const cpu: number[] = []
  for (let i = 0; i <= RUNS; i++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    const rig = await createTestRig()
    const t1 = performance.now()
    const c1 = process.cpuUsage(c0)
    await rig.device(`d-${i}`)
    await rig.close()
    wall.push(t1 - t0)
    cpu.push((c1.user + c1.system) / 1000)
  }
  const [firstWall] = wall.splice(0, 1)
  const [firstCpu] = cpu.splice(0, 1)
  wall.sort((a, b) => a - b)
  cpu.sort((a, b) => a - b)
  const ms = (n: number | undefined): string => `${(n ?? 0).toFixed(0)} ms`
  console.log('\n(e) createTestRig() start, in one process')
  console.table({
    first: { wall: ms(firstWall), cpu: ms(firstCpu) },
    [`next ${RUNS}, median`]: { wall: ms(percentile(wall, 0.5)), cpu: ms(percentile(cpu, 0.5)) },
    [`next ${RUNS}, p95`]: { wall: ms(percentile(wall, 0.95)), cpu: ms(percentile(cpu, 0.95)) }
  })
}
