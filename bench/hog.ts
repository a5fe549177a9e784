/**
 * Contention mode (issue #26, point 4): `--hog` or `BENCH_HOG=1` runs a scenario while CPU hogs
 * share the machine: child processes that spin without pause, one per core but one (at least
 * one; `BENCH_HOG_PROCS=<n>` chooses). They run from before the bare baseline starts until
 * devicehub's last figure, so both are measured under the same contention.
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import os from 'node:os'

/** Whether this run is the contention mode. */
export function hogEnabled (): boolean {
  return process.env.BENCH_HOG === '1' || process.env.BENCH_HOG === 'true'
}

/** How many spinning processes the contention mode starts. */
export function hogProcesses (): number {
  const chosen = Number(process.env.BENCH_HOG_PROCS)
  if (Number.isInteger(chosen) && chosen >= 1) return chosen
  return Math.max(1, os.availableParallelism() - 1)
}

/** A title suffix naming the contention, empty without it. */
export function hogLabel (): string {
  return hogEnabled() ? `, under CPU hog (${hogProcesses()} spinning process${hogProcesses() === 1 ? '' : 'es'})` : ''
}

/**
 * Runs `measure` with the hogs spinning when the contention mode is on (plainly otherwise), and
 * always stops them, even when `measure` throws.
 *
 * @example
 * const figures = await withHog(() => measureOnce())
 */
export async function withHog<T> (measure: () => Promise<T>): Promise<T> {
  if (!hogEnabled()) return measure()
  const hogs: ChildProcess[] = Array.from({ length: hogProcesses() }, () =>
    // A bare loop: no allocation, no I/O; pure competition for a core.
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
  try {
    return await measure()
  } finally {
    await Promise.all(hogs.map(async (hog) => {
      if (hog.exitCode !== null || hog.signalCode !== null) return
      const exited = once(hog, 'exit')
      hog.kill('SIGKILL')
      await exited
    }))
  }
}
