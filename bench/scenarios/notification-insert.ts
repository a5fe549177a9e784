/** (a) Notification insert throughput: 50 connections, req/s and latency vs a bare-Fastify POST. */
import autocannon from 'autocannon'
import type { ChildServer } from '../lib.js'
import { benchDatabaseLabel } from '../pg.js'
import { printTable, startChild } from '../lib.js'

const CONNECTIONS = 50
const DURATION_S = 5

async function hammer (url: string, token: string): Promise<{ rps: number, p50: number, p99: number, errors: number }> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ notification: 'temperature', parameters: { value: 21.5, unit: 'C' } })
  })
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx }
}

export async function notificationInsert (): Promise<{ ratio: number }> {
  const children: ChildServer[] = []
  try {
    const baseline = await startChild('baseline-server')
    children.push(baseline)
    await hammer(`${baseline.url}/notification`, 'none') // warm-up, not counted
    const base = await hammer(`${baseline.url}/notification`, 'none')
    await baseline.stop()
    children.pop()

    const hub = await startChild('devicehub-server')
    children.push(hub)
    const url = `${hub.url}/device/bench-device/notification`
    await hammer(url, hub.token)
    const ours = await hammer(url, hub.token)
    const ratio = ours.rps / base.rps
    printTable(`(a) notification insert, ${CONNECTIONS} connections, ${DURATION_S} s (${benchDatabaseLabel()})`, ['server', 'req/s', 'p50 ms', 'p99 ms', 'errors/non-2xx'], [
      ['bare Fastify', base.rps, base.p50, base.p99, base.errors],
      ['devicehub', ours.rps, ours.p50, ours.p99, ours.errors],
      ['ratio', ratio, '', '', '']
    ])
    console.log(`target: >= 50% of the baseline -> ${ratio >= 0.5 ? 'met' : 'NOT met'} (${(ratio * 100).toFixed(1)}%)`)
    return { ratio }
  } finally {
    for (const child of children) await child.stop()
  }
}
