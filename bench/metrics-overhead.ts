/**
 * What the per-route CPU time of /metrics costs per request, in one process and without the
 * network: `app.inject()` of the (a) insert (`POST /device/{id}/notification`) into two devicehub
 * servers on fresh SQLite files, metrics on with and without `routeCpu`, alternating, the process
 * CPU per request of each round (alternating which goes first); the best round of each and the
 * median of the per-round differences are printed (the least disturbed by other
 * load on the machine). Complements `npm run bench -- metrics-cost` (over loopback, which a busy
 * machine makes noisy).
 *
 * @example
 * node --import tsx bench/metrics-overhead.ts [rounds] [requests]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunningServer } from '../lib/start-server.js'
import { startServer } from '../lib/start-server.js'
import { printTable } from './lib.js'
import { median } from './targets.js'

const rounds = Number(process.argv[2] ?? 7)
const requests = Number(process.argv[3] ?? 3000)
const dir = mkdtempSync(join(tmpdir(), 'devicehub-metrics-overhead-'))

async function server (name: string, routeCpu: boolean): Promise<{ server: RunningServer, token: string }> {
  const running = await startServer({ db: join(dir, `${name}.db`), port: 0, host: '127.0.0.1', logger: false, admin: { password: 'bench-admin-password' }, metrics: { routeCpu } })
  await running.hub.store.devices.insert({ id: 'bench-device', name: 'bench', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  return { server: running, token: (await running.adminTokens()).accessToken }
}

async function cpuPerRequest (target: { server: RunningServer, token: string }, count: number): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    const res = await target.server.app.inject({
      method: 'POST',
      url: '/api/rest/device/bench-device/notification',
      headers: { authorization: `Bearer ${target.token}` },
      payload: { notification: 'temperature', parameters: { value: 21.5, unit: 'C' } }
    })
    if (res.statusCode !== 201) throw new Error(`insert answered ${res.statusCode}`)
  }
  const used = process.cpuUsage(before)
  return (used.user + used.system) / count
}

const variants = [{ name: 'metrics on, no per-route CPU', target: await server('plain', false) }, { name: 'metrics on, per-route CPU', target: await server('cpu', true) }]
try {
  for (const v of variants) await cpuPerRequest(v.target, 500) // warm-up
  const best = variants.map(() => Infinity)
  const differences: number[] = []
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always runs right after the other's garbage.
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    const figures: number[] = []
    for (const i of order) {
      figures[i] = await cpuPerRequest(variants[i]!.target, requests)
      best[i] = Math.min(best[i]!, figures[i]!)
    }
    differences.push(figures[1]! - figures[0]!)
  }
  printTable(`per-route CPU time: process CPU per inserted notification (app.inject, best of ${rounds} rounds of ${requests})`, ['server', 'CPU µs per insert'],
    variants.map((v, i) => [v.name, best[i]!]))
  console.log(`per-route CPU time adds ${(best[1]! - best[0]!).toFixed(1)} µs per insert between the best rounds (${((best[1]! / best[0]! - 1) * 100).toFixed(1)}%); ` +
    `median of the per-round differences ${median(differences).toFixed(1)} µs (rounds: ${differences.map((d) => d.toFixed(0)).join(', ')})`)
} finally {
  for (const v of variants) await v.target.server.close()
  rmSync(dir, { recursive: true, force: true })
}
