/**
 * `BENCH_PERF=<dir>`: Linux `perf record` of each devicehub child while it serves (from its
 * `ready` message until it is stopped), with call graphs and V8's perf map
 * (`--perf-basic-prof`), so native time (SQLite, the kernel's socket writes, the garbage
 * collector, malloc) is counted where the CPU spent it. V8's own profiler (`BENCH_CPU_PROF`)
 * samples on a signal that a descheduled thread takes late, and charges the wait to whatever
 * JavaScript runs next: at stop 51 it gave `process.nextTick` 6% of an insert's CPU where perf,
 * on the same load, gave it 0.4%. Summarise a recording with `scripts/perf-summary.ts`.
 *
 * Recording starts `BENCH_PERF_DELAY_S` seconds (default 5, the default warm-up) after the child
 * is ready, so the measured window is what it holds, not V8 optimising the code: recorded from
 * the start, a warm-up's unoptimised `nextTick` took 4% of the samples.
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/** The Node options a recorded child needs (none when `BENCH_PERF` is unset). */
export function perfChildArgs (): string[] {
  return process.env.BENCH_PERF === undefined ? [] : ['--perf-basic-prof']
}

/** A running `perf record`; `stop()` ends it and waits until its file is written. */
export interface PerfRecording {
  stop(): Promise<void>
}

/**
 * Starts recording process `pid` into `<BENCH_PERF>/<name>-<pid>.perf.data`; undefined when
 * `BENCH_PERF` is unset.
 *
 * @example
 * const recording = recordPerf('devicehub', child.pid!)
 * await recording?.stop()
 */
export function recordPerf (name: string, pid: number): PerfRecording | undefined {
  const dir = process.env.BENCH_PERF
  if (dir === undefined) return undefined
  mkdirSync(dir, { recursive: true })
  const output = join(dir, `${name}-${pid}.perf.data`)
  const delay = Number(process.env.BENCH_PERF_DELAY_S ?? 5)
  let perf: ChildProcess | undefined
  let exited: Promise<unknown> = Promise.resolve()
  const start = setTimeout(() => {
    perf = spawn('perf', ['record', '-F', '999', '-g', '-p', String(pid), '-o', output], { stdio: 'ignore' })
    exited = once(perf, 'exit').catch(() => undefined)
    perf.on('error', (error) => console.error(`BENCH_PERF: perf did not start (${error.message}); is linux-perf installed?`))
  }, Number.isFinite(delay) && delay >= 0 ? delay * 1000 : 5000)
  return {
    async stop () {
      clearTimeout(start)
      if (perf !== undefined && perf.exitCode === null) perf.kill('SIGINT')
      await exited
    }
  }
}
