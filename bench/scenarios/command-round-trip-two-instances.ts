/**
 * (d) The command round trip across two instances over one PostgreSQL database: devices
 * long-poll and update on instance A, clients post and wait on instance B, so every wake-up
 * crosses instances through LISTEN/NOTIFY. Beside it, the same load on one instance of the
 * same kind of database.
 */
import type { ChildServer } from '../lib.js'
import { percentile, printTable, startChild } from '../lib.js'
import { benchPostgresUrl, nextTransactionId } from '../pg.js'
import type { Paths } from './command-round-trip.js'
import { DURATION_MS, messageCursor, PAIRS, run, THINK_MS } from './command-round-trip.js'
import type { Verdict } from '../targets.js'
import { benchWarmupMs, benchWindowMs, fixed, printVerdicts, repeated, repsLabel, times } from '../targets.js'

function pathsFor (device: ChildServer, client: ChildServer): Paths {
  return {
    poll: (d, cursor) => `${device.url}/device/${d}/command/poll?waitTimeout=30&names=ping,stop&timestamp=${cursor}`,
    post: (d) => `${client.url}/device/${d}/command`,
    update: (d, id) => `${device.url}/device/${d}/command/${id}`,
    wait: (d, id) => `${client.url}/device/${d}/command/${id}/poll?waitTimeout=30`
  }
}

const MODES = [{ key: 'saturated', name: 'saturated', think: 0 }, { key: 'paced', name: `paced ~${THINK_MS} ms`, think: THINK_MS }]
const DEPLOYMENTS = [{ key: 'one', name: 'one instance' }, { key: 'two', name: 'two instances (A: device, B: client)' }]

/** Round trips per second of a window's recorded latencies (its first 0.5 s is not recorded). */
const rateOf = (latencies: readonly number[], windowMs: number): number => latencies.length / (windowMs / 1000 - 0.5)

async function measureOnce (windowMs: number): Promise<Record<string, number>> {
  const children: ChildServer[] = []
  try {
    const a = await startChild('devicehub-server')
    children.push(a)
    // The JWT secret is stored in the shared database, so A's token is valid on B too.
    const b = await startChild('devicehub-server', { db: a.db })
    children.push(b)
    const flat: Record<string, number> = {}
    const deployments = [[DEPLOYMENTS[0]!, a, a], [DEPLOYMENTS[1]!, a, b]] as const
    for (const [deployment, device, client] of deployments) {
      await run(a, pathsFor(device, client), await messageCursor(a), benchWarmupMs(), 0)
      for (const mode of MODES) {
        const xidBefore = await nextTransactionId(a.db!)
        const l = await run(a, pathsFor(device, client), await messageCursor(a), windowMs, mode.think)
        const key = `${mode.key}.${deployment.key}`
        // Write transactions per round trip recorded: the run's first 0.5 s and its drain are not
        // recorded, so this reads some 10% high, alike for both deployments.
        flat[`${key}.writes`] = (await nextTransactionId(a.db!) - xidBefore) / Math.max(1, l.length)
        flat[`${key}.rate`] = rateOf(l, windowMs)
        flat[`${key}.p50`] = percentile(l, 50)
        flat[`${key}.p99`] = percentile(l, 99)
        flat[`${key}.max`] = l[l.length - 1] ?? NaN
      }
    }
    // The saturated rates again in the reverse order (two, then one): each deployment's rate is the
    // mean of a window before and after the other's, so neither gains from a drift of the
    // machine's speed, nor from being measured first (fresh heaps, smaller tables).
    for (const [deployment, device, client] of [...deployments].reverse()) {
      const l = await run(a, pathsFor(device, client), await messageCursor(a), windowMs, 0)
      const key = `saturated.${deployment.key}.rate`
      flat[key] = (flat[key]! + rateOf(l, windowMs)) / 2
    }
    flat['saturated.ratio'] = flat['saturated.one.rate']! > 0 ? flat['saturated.two.rate']! / flat['saturated.one.rate']! : NaN
    await a.stop()
    await b.stop()
    children.length = 0
    // SQLite's paced round trip, the reference of the paced target, on a SQLite file in this run.
    const lite = await startChild('devicehub-server', { sqlite: true })
    children.push(lite)
    await run(lite, pathsFor(lite, lite), await messageCursor(lite), benchWarmupMs(), 0)
    const paced = MODES.find((mode) => mode.key === 'paced')!
    flat['sqlite.paced.p99'] = percentile(await run(lite, pathsFor(lite, lite), await messageCursor(lite), windowMs, paced.think), 99)
    flat['paced.ratio'] = flat['paced.two.p99']! / flat['sqlite.paced.p99']!
    return flat
  } finally {
    for (const child of children) await child.stop()
  }
}

/**
 * (d), with its targets from issue #26: two instances saturated ≥ the one-instance rate; paced
 * p99 < 3× SQLite's paced p99, measured in the same repetition on a SQLite file (the one
 * devicehub child of this scenario that is not on PostgreSQL). The saturated rates are each
 * deployment's mean over two windows, taken one, two, two, one.
 */
export async function commandRoundTripTwoInstances (): Promise<Verdict[]> {
  if (benchPostgresUrl() === undefined) throw new Error('roundtrip2 needs BENCH_PG_URL (two instances share one PostgreSQL database)')
  const windowMs = benchWindowMs(DURATION_MS)
  const m = await repeated(() => measureOnce(windowMs))
  const rows = DEPLOYMENTS.flatMap((d) => MODES.map((mode) =>
    [`${mode.name}: ${d.name}`, ...['rate', 'p50', 'p99', 'max', 'writes'].map((k) => m[`${mode.key}.${d.key}.${k}`]!)]))
  printTable(`(d) command round trip across instances, ${PAIRS} device/client pairs, ${windowMs / 1000} s per mode (PostgreSQL; ${repsLabel()})`, ['mode: deployment', 'round trips/s', 'p50 ms', 'p99 ms', 'max ms', 'write transactions/rt'], rows)
  const p99 = m['paced.two.p99']!
  const verdicts: Verdict[] = [
    {
      scenario: '(d) two instances on PostgreSQL, saturated',
      bare: `one instance ${fixed(m['saturated.one.rate']!, 0)} rt/s`,
      devicehub: `two instances ${fixed(m['saturated.two.rate']!, 0)} rt/s`,
      ratio: fixed(m['saturated.ratio']!),
      target: '≥ one-instance rate (≥ 1.00)',
      met: m['saturated.ratio']! >= 1
    },
    {
      scenario: '(d) two instances on PostgreSQL, paced',
      bare: `one SQLite instance, paced p99 ${fixed(m['sqlite.paced.p99']!, 1)} ms`,
      devicehub: `two instances p99 ${fixed(p99, 1)} ms (one PostgreSQL instance ${fixed(m['paced.one.p99']!, 1)} ms)`,
      ratio: `p99 ${times(m['paced.ratio']!)}`,
      target: 'p99 < 3× SQLite paced p99',
      met: m['paced.ratio']! < 3
    }
  ]
  printVerdicts(verdicts)
  return verdicts
}
