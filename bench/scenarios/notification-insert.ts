/**
 * (a) Notification insert throughput: 50 connections, req/s and latency vs a bare-Fastify POST.
 * Targets (issue #26): ≥ 0.70 of the bare rate on SQLite, ≥ 0.50 on PostgreSQL.
 */
import autocannon from 'autocannon'
import type { ChildServer } from '../lib.js'
import { benchDatabaseLabel, benchPostgresUrl } from '../pg.js'
import { printTable, startChild } from '../lib.js'
import type { Verdict } from '../targets.js'
import { benchWindowMs, clientBoundBaseline, fixed, printVerdicts, repeated, repsLabel, withClientCpu } from '../targets.js'

const CONNECTIONS = 50
const DURATION_S = 5

/**
 * `client`: the bench process's CPU (autocannon runs in it) during the measured run, in cores.
 * `serverUs`: the server process's own CPU time (user + system) per request in that run, µs.
 */
export interface InsertFigures { rps: number, p50: number, p99: number, errors: number, client: number, serverUs: number }

export async function hammer (server: ChildServer, url: string, token: string, seconds: number): Promise<InsertFigures> {
  const cpuBefore = await server.cpu()
  const { value: result, clientCpu } = await withClientCpu(() => autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ notification: 'temperature', parameters: { value: 21.5, unit: 'C' } })
  }))
  const serverUs = (await server.cpu() - cpuBefore) / Math.max(1, result.requests.total)
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx, client: clientCpu, serverUs }
}

/** The bare baseline's insert figures (one warm-up run first, not counted). */
export async function bareInsert (seconds: number): Promise<InsertFigures> {
  const baseline = await startChild('baseline-server')
  try {
    await hammer(baseline, `${baseline.url}/notification`, 'none', seconds)
    return await hammer(baseline, `${baseline.url}/notification`, 'none', seconds)
  } finally {
    await baseline.stop()
  }
}

/** A devicehub child's insert figures (one warm-up run first, not counted). */
export async function devicehubInsert (seconds: number, env?: Record<string, string>): Promise<InsertFigures> {
  const hub: ChildServer = await startChild('devicehub-server', { env })
  try {
    const url = `${hub.url}/device/bench-device/notification`
    await hammer(hub, url, hub.token, seconds)
    return await hammer(hub, url, hub.token, seconds)
  } finally {
    await hub.stop()
  }
}

const prefixed = (prefix: string, f: InsertFigures): Record<string, number> =>
  Object.fromEntries(Object.entries(f).map(([k, v]) => [`${prefix}.${k}`, v]))

export async function notificationInsert (): Promise<Verdict[]> {
  const seconds = benchWindowMs(DURATION_S * 1000) / 1000
  const m = await repeated(async (): Promise<Record<string, number>> => {
    const base = await bareInsert(seconds)
    const ours = await devicehubInsert(seconds)
    return { ...prefixed('bare', base), ...prefixed('hub', ours), ratio: ours.rps / base.rps, cpuRatio: base.serverUs / ours.serverUs }
  })
  printTable(`(a) notification insert, ${CONNECTIONS} connections, ${seconds} s (${benchDatabaseLabel()}; ${repsLabel()})`,
    ['server', 'req/s', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'bench client, cores', 'server CPU µs/req'], [
      ['bare Fastify', m['bare.rps']!, m['bare.p50']!, m['bare.p99']!, m['bare.errors']!, m['bare.client']!, m['bare.serverUs']!],
      ['devicehub', m['hub.rps']!, m['hub.p50']!, m['hub.p99']!, m['hub.errors']!, m['hub.client']!, m['hub.serverUs']!],
      ['ratio (median of same-run ratios)', m.ratio!, '', '', '', '', m.cpuRatio!]
    ])
  // The rate ratio is the target. The CPU ratio (bare µs / devicehub µs) compares the same two
  // servers by their own CPU per request, which the load generator's share of the cores does not
  // move: where the two ratios part, the client (or the machine) bounded a rate.
  console.log(`server CPU per request, bare / devicehub: ${fixed(m.cpuRatio!)} (the cost ratio; the target is the rate ratio)`)
  const pg = benchPostgresUrl() !== undefined
  const goal = pg ? 0.5 : 0.7
  const verdicts: Verdict[] = [{
    scenario: `(a) insert, ${pg ? 'PostgreSQL' : 'SQLite'}`,
    bare: `${fixed(m['bare.rps']!, 0)} req/s`,
    devicehub: `${fixed(m['hub.rps']!, 0)} req/s`,
    ratio: fixed(m.ratio!),
    target: `≥ ${fixed(goal)}`,
    met: m.ratio! >= goal,
    caveat: clientBoundBaseline(m['bare.client']!)
  }]
  printVerdicts(verdicts)
  return verdicts
}
