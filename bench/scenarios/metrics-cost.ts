/**
 * What `/metrics` costs the insert path (issue #26, point 5): the (a) insert load against three
 * devicehub children in turn, in the same run: metrics off, metrics on without the per-route CPU
 * time, metrics on with it (the default when metrics are on). The last two differ only by the
 * `process.cpuUsage()` pair around each request.
 */
import { benchDatabaseLabel } from '../pg.js'
import { printTable } from '../lib.js'
import type { Verdict } from '../targets.js'
import { benchWindowMs, fixed, repeated, repsLabel } from '../targets.js'
import { bareInsert, devicehubInsert } from './notification-insert.js'

const VARIANTS = [
  { key: 'off', name: 'devicehub, metrics off', env: { BENCH_METRICS: 'off' } },
  { key: 'on', name: 'devicehub, metrics on, no per-route CPU', env: { BENCH_METRICS: 'no-route-cpu' } },
  { key: 'cpu', name: 'devicehub, metrics on, per-route CPU', env: { BENCH_METRICS: 'on' } }
]

export async function metricsCost (): Promise<Verdict[]> {
  const seconds = benchWindowMs(5000) / 1000
  const m = await repeated(async () => {
    const flat: Record<string, number> = { bare: (await bareInsert(seconds)).rps }
    for (const variant of VARIANTS) {
      const figures = await devicehubInsert(seconds, variant.env)
      flat[`${variant.key}.rps`] = figures.rps
      flat[`${variant.key}.p99`] = figures.p99
      flat[`${variant.key}.ratio`] = figures.rps / flat.bare!
    }
    flat.cpuCost = 1 - flat['cpu.rps']! / flat['on.rps']!
    return flat
  })
  printTable(`/metrics cost on (a) notification insert, ${seconds} s each (${benchDatabaseLabel()}; ${repsLabel()})`, ['server', 'req/s', 'p99 ms', 'ratio to bare'], [
    ['bare Fastify', m.bare!, '', 1],
    ...VARIANTS.map((v) => [v.name, m[`${v.key}.rps`]!, m[`${v.key}.p99`]!, m[`${v.key}.ratio`]!])
  ])
  console.log(`per-route CPU time costs ${fixed(m.cpuCost! * 100, 1)}% of the insert rate (metrics on, with vs without; noise on a loaded machine is several %)`)
  return []
}
