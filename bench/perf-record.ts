/**
 * `BENCH_PERF=<dir>`: Linux `perf record` of each devicehub child while it serves (from its
 * `ready` message until it is stopped), with call graphs and V8's perf map
 * (`--perf-basic-prof`), so native time (SQLite, the kernel's socket writes, the garbage
 * collector, malloc) is counted where the CPU spent it and named. V8's own profiler
 * (`BENCH_CPU_PROF`) shows a call into native code or V8's runtime as self time of the JavaScript
 * function that made it: at stop 51 it showed 6% of an insert's CPU in `process.nextTick`'s object
 * literal, which perf named as `Runtime_DefineKeyedOwnPropertyInLiteral` (lib/next-tick-warmup.ts).
 * Summarise a recording with `scripts/perf-summary.ts`.
 *
 * Recording starts `BENCH_PERF_DELAY_S` seconds (default 5, the default warm-up) after the child
 * is ready, so what it holds is the measured window, not V8 still optimising the code.
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
