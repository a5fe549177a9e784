/**
 * (b) Command round trip at 100 device/client pairs: the client posts a command, the device
 * (long-polling) receives it and updates it, the client waiting on `/command/{id}/poll` gets
 * the result. Latency from the post to the result.
 */
import type { ChildServer } from '../lib.js'
import { percentile, printTable, request, sleep, startChild } from '../lib.js'

const PAIRS = 100
const DURATION_MS = 5000

interface Paths {
  poll(device: string, cursor: string): string
  post(device: string): string
  update(device: string, id: number): string
  wait(device: string, id: number): string
}

async function run (server: ChildServer, paths: Paths, startCursor: string, durationMs: number): Promise<number[]> {
  const latencies: number[] = []
  let running = true
  const devices = Array.from({ length: PAIRS }, (_, i) => `pair-${i}`)
  const deviceLoops = devices.map(async (device) => {
    let cursor = startCursor
    while (running) {
      const res = await request('GET', paths.poll(device, cursor), server.token)
      for (const command of res.body ?? []) {
        cursor = command.timestamp
        await request('PUT', paths.update(device, command.id), server.token, { status: 'Done', result: { ok: true } })
      }
    }
  })
  const clientLoops = devices.map(async (device) => {
    while (running) {
      const started = performance.now()
      const posted = await request('POST', paths.post(device), server.token, { command: 'ping', parameters: { n: 1 } })
      const done = await request('GET', paths.wait(device, posted.body.id), server.token)
      if (done.status !== 200 || done.body.status !== 'Done') throw new Error(`round trip failed: ${done.status}`)
      latencies.push(performance.now() - started)
    }
  })
  await sleep(durationMs)
  running = false
  await Promise.all(clientLoops)
  // Wake the device loops still parked, so they notice the stop.
  await Promise.all(devices.map((device) => request('POST', paths.post(device), server.token, { command: 'stop' })))
  await Promise.all(deviceLoops)
  return latencies.sort((a, b) => a - b)
}

export async function commandRoundTrip (): Promise<{ p99: number }> {
  const children: ChildServer[] = []
  try {
    const baseline = await startChild('baseline-server')
    children.push(baseline)
    const basePaths: Paths = {
      poll: (d) => `${baseline.url}/device/${d}/command/poll`,
      post: (d) => `${baseline.url}/device/${d}/command`,
      update: (d, id) => `${baseline.url}/device/${d}/command/${id}`,
      wait: (d, id) => `${baseline.url}/device/${d}/command/${id}/poll`
    }
    await run(baseline, basePaths, '', 1000)
    const base = await run(baseline, basePaths, '', DURATION_MS)
    await baseline.stop()
    children.pop()

    const hub = await startChild('devicehub-server')
    children.push(hub)
    const paths: Paths = {
      poll: (d, cursor) => `${hub.url}/device/${d}/command/poll?waitTimeout=30&names=ping,stop&timestamp=${cursor}`,
      post: (d) => `${hub.url}/device/${d}/command`,
      update: (d, id) => `${hub.url}/device/${d}/command/${id}`,
      wait: (d, id) => `${hub.url}/device/${d}/command/${id}/poll?waitTimeout=30`
    }
    const now = (await request('GET', `${hub.url}/info`, hub.token)).body.serverTimestamp as string
    await run(hub, paths, now, 1000)
    const later = (await request('GET', `${hub.url}/info`, hub.token)).body.serverTimestamp as string
    const ours = await run(hub, paths, later, DURATION_MS)
    const row = (name: string, l: number[]): Array<string | number> => [name, l.length, l.length / (DURATION_MS / 1000), percentile(l, 50), percentile(l, 99), l[l.length - 1] ?? NaN]
    printTable(`(b) command round trip, ${PAIRS} device/client pairs, ${DURATION_MS / 1000} s (SQLite file)`, ['server', 'round trips', 'per s', 'p50 ms', 'p99 ms', 'max ms'], [
      row('bare Fastify', base),
      row('devicehub', ours),
      ['ratio (p99)', '', '', percentile(ours, 50) / percentile(base, 50), percentile(ours, 99) / percentile(base, 99), '']
    ])
    const p99 = percentile(ours, 99)
    console.log(`target: p99 < 50 ms -> ${p99 < 50 ? 'met' : 'NOT met'} (${p99.toFixed(1)} ms)`)
    return { p99 }
  } finally {
    for (const child of children) await child.stop()
  }
}
