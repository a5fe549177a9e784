/**
 * The targets of issue #26 and how the benchmarks report against them: every measured figure
 * is the median over `BENCH_REPS` repetitions (default 1), each repetition measuring the bare
 * baseline and devicehub back to back, so every ratio is a same-run ratio and the median is
 * taken over those ratios (never a ratio of medians from different runs).
 */
import os from 'node:os'
import { printTable } from './lib.js'

/** One line of a benchmark's verdict: what was compared with what, and whether the target is met. */
export interface Verdict {
  scenario: string
  bare: string
  devicehub: string
  /** The same-run ratio, as printed (e.g. `0.42` or `3.1×`). */
  ratio: string
  target: string
  /** undefined: not measurable in this run (the verdict says why in `devicehub`/`target`). */
  met: boolean | undefined
  /** Printed under the verdict: why the ratio may say little in this run. */
  caveat?: string
}

/**
 * A caveat when the bare server's own p99 is far above a quiet machine's (issue #26: under 10 ms
 * for (b) paced and (f)): the machine, which the bench client shares, is saturated, and the ratio
 * compares two overloaded systems.
 *
 * @example
 * const caveat = saturatedBaseline(baseP99)
 */
export function saturatedBaseline (bareP99Ms: number): string | undefined {
  return bareP99Ms > 50
    ? `the bare server's p99 is ${fixed(bareP99Ms, 0)} ms (a quiet machine: under 10 ms): the machine is saturated, re-run on a quiet one`
    : undefined
}

/**
 * Runs `load` (a scenario's load generator, which runs in this process) and returns what it
 * returned with this process's CPU meanwhile, as a fraction of one core.
 *
 * @example
 * const { value: latencies, clientCpu } = await withClientCpu(() => run(server, paths, cursor, 5000, 0))
 */
export async function withClientCpu<T> (load: () => Promise<T>): Promise<{ value: T, clientCpu: number }> {
  const startedCpu = process.cpuUsage()
  const startedAt = performance.now()
  const value = await load()
  const used = process.cpuUsage(startedCpu)
  return { value, clientCpu: (used.user + used.system) / 1000 / (performance.now() - startedAt) }
}

/**
 * A caveat when the bench's own client (one process) kept a core busy while it measured the bare
 * server: the baseline's rate is then the client's, not the server's, and a ratio to it says
 * less about devicehub's cost (stop 40: on a slow instance the saturated bare round trip ran at a
 * third of its usual rate with the client at 85-91% of a core, and the ratio read 0.91).
 *
 * @example
 * const caveat = clientBoundBaseline(m['bare.client']!)
 */
export function clientBoundBaseline (clientCpu: number): string | undefined {
  return clientCpu > 0.8
    ? `the bench client used ${fixed(clientCpu * 100, 0)}% of a core while it measured the bare server: the baseline may be bound by its load generator`
    : undefined
}

/**
 * How many times each scenario repeats (`--reps N` on the command line, or `BENCH_REPS=N`).
 *
 * @example
 * BENCH_REPS=3 npm run bench -- roundtrip
 */
export function benchReps (): number {
  const reps = Number(process.env.BENCH_REPS ?? '1')
  return Number.isInteger(reps) && reps >= 1 ? reps : 1
}

/**
 * A measuring window in ms: the scenario's default, or `BENCH_SECONDS` (to check that the benches
 * work quickly; the published figures use the defaults).
 *
 * @example
 * const windowMs = benchWindowMs(5000)
 */
export function benchWindowMs (defaultMs: number): number {
  const seconds = Number(process.env.BENCH_SECONDS)
  return Number.isFinite(seconds) && seconds > 0 ? Math.max(1000, seconds * 1000) : defaultMs
}

/**
 * How long each server runs its scenario's load, unmeasured, before the measured window: by
 * default one full window (5 s, as (a) always did), `BENCH_WARMUP_S=<s>` to choose. V8 is still
 * optimising 2.5-5.5 s after a devicehub start (stop 35: TurboFan compiles took 15% of its CPU
 * in a window that began after a 1 s warm-up), and the bare server has far less code to
 * optimise, so a short warm-up measures devicehub's start rather than its steady state. The
 * baseline gets the same warm-up.
 */
export function benchWarmupMs (): number {
  const seconds = Number(process.env.BENCH_WARMUP_S)
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : benchWindowMs(5000)
}

export function median (values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b)
  if (sorted.length === 0) return NaN
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * Runs `once` `BENCH_REPS` times and returns the median of every figure it returns (figures are
 * flat name → number records; ratios must be computed inside `once`, so they are same-run ratios),
 * but the largest of a figure whose name ends in `.worst`: one repetition's stall is not a median's.
 *
 * @example
 * const m = await repeated(async () => ({ bare: 100, ours: 60, ratio: 0.6 }))
 */
export async function repeated<T extends Record<string, number>> (once: (rep: number) => Promise<T>): Promise<T> {
  const reps = benchReps()
  const samples: T[] = []
  for (let rep = 0; rep < reps; rep++) {
    if (reps > 1) console.log(`  repetition ${rep + 1} of ${reps}`)
    samples.push(await once(rep))
  }
  const result: Record<string, number> = {}
  for (const key of Object.keys(samples[0]!)) {
    const values = samples.map((s) => s[key]!)
    result[key] = key.endsWith('.worst') ? Math.max(...values) : median(values)
  }
  return result as T
}

/** A title suffix saying how the figures were taken. */
export function repsLabel (): string {
  const reps = benchReps()
  return reps === 1 ? 'one run' : `medians of ${reps} runs`
}

export const fixed = (n: number, digits = 2): string => Number.isFinite(n) ? n.toFixed(digits) : String(n)
export const times = (n: number): string => `${fixed(n)}×`

/** Prints the verdict lines of one scenario: one `target:` line each, easy to grep. */
export function printVerdicts (verdicts: Verdict[]): void {
  for (const v of verdicts) {
    const state = v.met === undefined ? (v.target.includes('shown only') ? 'shown only' : 'not measurable in this run') : v.met ? 'met' : 'NOT met'
    console.log(`target ${v.scenario}: ${v.target} -> ${state} (ratio ${v.ratio}; bare ${v.bare}; devicehub ${v.devicehub})`)
    if (v.caveat !== undefined) console.log(`  caveat: ${v.caveat}`)
  }
}

function metCell (met: boolean | undefined): string {
  return met === undefined ? '—' : met ? 'yes' : 'NO'
}

/** The summary of a whole run: a text table, then the same as Markdown for bench/README.md. */
export function printSummary (verdicts: Verdict[]): void {
  if (verdicts.length === 0) return
  printTable(`Targets of issue #26 (${repsLabel()}, ${machineLabel()}, ${new Date().toISOString().slice(0, 10)})`,
    ['scenario', 'bare', 'devicehub', 'ratio', 'target', 'met?'],
    verdicts.map((v) => [v.scenario, v.bare, v.devicehub, v.ratio, v.target, metCell(v.met)]))
  console.log('\nMarkdown (bench/README.md, "Last measured"):\n')
  console.log('| scenario | bare | devicehub | ratio | target | met? |')
  console.log('|---|---|---|---|---|---|')
  for (const v of verdicts) console.log(`| ${v.scenario} | ${v.bare} | ${v.devicehub} | ${v.ratio} | ${v.target} | ${metCell(v.met)} |`)
}

/** The machine the figures come from: CPU model, cores, memory, Node. */
export function machineLabel (): string {
  const cpus = os.cpus()
  return `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`
}
