/**
 * (d) The command round trip across two instances over one PostgreSQL database: devices
 * long-poll and update on instance A, clients post and wait on instance B, so every wake-up
 * crosses instances through LISTEN/NOTIFY. Beside it, the same load on one instance of the
 * same kind of database.
 */
import type { ChildServer } from '../lib.js'
import { percentile, printTable, startChild } from '../lib.js'
import { benchPostgresUrl } from '../pg.js'
import type { Paths } from './command-round-trip.js'
import { DURATION_MS, messageCursor, PAIRS, run, THINK_MS } from './command-round-trip.js'

function pathsFor (device: ChildServer, client: ChildServer): Paths {
  return {
    poll: (d, cursor) => `${device.url}/device/${d}/command/poll?waitTimeout=30&names=ping,stop&timestamp=${cursor}`,
    post: (d) => `${client.url}/device/${d}/command`,
    update: (d, id) => `${device.url}/device/${d}/command/${id}`,
    wait: (d, id) => `${client.url}/device/${d}/command/${id}/poll?waitTimeout=30`
  }
}

export async function commandRoundTripTwoInstances (): Promise<{ p99: number }> {
  if (benchPostgresUrl() === undefined) throw new Error('roundtrip2 needs BENCH_PG_URL (two instances share one PostgreSQL database)')
  const children: ChildServer[] = []
  const modes = [{ name: 'saturated', think: 0 }, { name: `paced ~${THINK_MS} ms`, think: THINK_MS }]
  try {
    const a = await startChild('devicehub-server')
    children.push(a)
    // The JWT secret is stored in the shared database, so A's token is valid on B too.
    const b = await startChild('devicehub-server', { db: a.db })
    children.push(b)

    const results: Array<{ name: string, latencies: number[] }> = []
    for (const [label, device, client] of [['one instance', a, a], ['two instances (A: device, B: client)', a, b]] as const) {
      await run(a, pathsFor(device, client), await messageCursor(a), 1000, 0)
      for (const mode of modes) {
        const latencies = await run(a, pathsFor(device, client), await messageCursor(a), DURATION_MS, mode.think)
        results.push({ name: `${mode.name}: ${label}`, latencies })
      }
    }
    const rows = results.map(({ name, latencies: l }) => [name, l.length / (DURATION_MS / 1000 - 0.5), percentile(l, 50), percentile(l, 99), l[l.length - 1] ?? NaN])
    printTable(`(d) command round trip across instances, ${PAIRS} device/client pairs, ${DURATION_MS / 1000} s per mode (PostgreSQL)`, ['mode: deployment', 'round trips/s', 'p50 ms', 'p99 ms', 'max ms'], rows)
    const p99 = percentile(results[3]!.latencies, 99)
    console.log(`two instances, paced: p99 ${p99.toFixed(1)} ms; saturated p99 ${percentile(results[2]!.latencies, 99).toFixed(1)} ms`)
    return { p99 }
  } finally {
    for (const child of children) await child.stop()
  }
}
