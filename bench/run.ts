/**
 * The benchmarks, against real server processes on SQLite over loopback, each next to a
 * bare-Fastify baseline measured in the same run. `npm run bench` runs all of them;
 * `npm run bench -- <scenario>` runs one (names below). Options:
 *
 * - `--reps N` (or `BENCH_REPS=N`): the scenarios with targets repeat N times and report medians;
 * - `--hog` (or `BENCH_HOG=1`): the contention mode, (f) and (b) by default, with CPU hogs beside
 *   both servers (bench/hog.ts).
 */
import { mqttBench } from './mqtt.js'
import { hogEnabled } from './hog.js'
import { dropBenchDatabases } from './pg.js'
import { commandRoundTrip } from './scenarios/command-round-trip.js'
import { commandRoundTripTwoInstances } from './scenarios/command-round-trip-two-instances.js'
import { metricsCost } from './scenarios/metrics-cost.js'
import { notificationInsert } from './scenarios/notification-insert.js'
import { parkedPolls } from './scenarios/parked-polls.js'
import { pluginDelivery } from './scenarios/plugin-delivery.js'
import { rigStart } from './scenarios/rig-start.js'
import { webSocketInsert, webSocketLatency, webSocketSessions } from './scenarios/websocket.js'
import type { Verdict } from './targets.js'
import { printSummary } from './targets.js'

const scenarios: Record<string, () => Promise<unknown>> = {
  insert: notificationInsert,
  roundtrip: commandRoundTrip,
  parked: parkedPolls,
  'ws-sessions': webSocketSessions,
  'ws-latency': webSocketLatency,
  'ws-insert': webSocketInsert,
  plugin: pluginDelivery,
  rig: rigStart,
  mqtt: mqttBench,
  // Needs BENCH_PG_URL: device on instance A, client on instance B, one PostgreSQL database.
  roundtrip2: commandRoundTripTwoInstances,
  // Not in the default run: the insert load with /metrics off, on, and on with per-route CPU time.
  'metrics-cost': metricsCost
}

/** Takes `--reps N` / `--reps=N` and `--hog` off the arguments (into the environment); the rest are scenario names. */
function parseArguments (args: string[]): string[] {
  const names: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--hog') process.env.BENCH_HOG = '1'
    else if (arg === '--reps') process.env.BENCH_REPS = args[++i] ?? '1'
    else if (arg.startsWith('--reps=')) process.env.BENCH_REPS = arg.slice('--reps='.length)
    else names.push(arg)
  }
  return names
}

const wanted = parseArguments(process.argv.slice(2))
const defaults = hogEnabled()
  ? ['ws-latency', 'roundtrip']
  : Object.keys(scenarios).filter((n) => n !== 'metrics-cost' && (n !== 'roundtrip2' || process.env.BENCH_PG_URL))
const names = wanted.length === 0 ? defaults : wanted
const verdicts: Verdict[] = []
try {
  for (const name of names) {
    const scenario = scenarios[name]
    if (scenario === undefined) {
      console.error(`unknown scenario '${name}' (choose from ${Object.keys(scenarios).join(', ')})`)
      process.exitCode = 2
      break
    }
    if (hogEnabled() && !['ws-latency', 'roundtrip'].includes(name)) console.log(`(--hog applies to ws-latency and roundtrip only: ${name} runs without the hog)`)
    const result = await scenario()
    if (Array.isArray(result)) verdicts.push(...result as Verdict[])
  }
  printSummary(verdicts)
} finally {
  await dropBenchDatabases()
}
