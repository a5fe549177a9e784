/**
 * (b) Command round trip at 100 device/client pairs: the client posts a command, the device
 * (long-polling) receives it and updates it, the client waiting on `/command/{id}/poll` gets
 * the result. Latency from the post to the result.
 */
import type { ChildServer } from '../lib.js'
import { benchDatabaseLabel } from '../pg.js'
import { percentile, printTable, request, sleep, startChild } from '../lib.js'

export const PAIRS = 100
export const DURATION_MS = 5000
/** Paced mode: each client thinks 0..2x this between round trips (mean ~ one per 200 ms per pair). */
export const THINK_MS = 200

export interface Paths {
  poll(device: string, cursor: string): string
  post(device: string): string
  update(device: string, id: number): string
  wait(device: string, id: number): string
}

export async function run (server: ChildServer, paths: Paths, startCursor: string, durationMs: number, thinkMs: number): Promise<number[]> {
  const latencies: number[] = []
  // Clients stop starting round trips first; devices serve until every client is done (a client
  // that posted just before the end must still get its answer).
  let running = true
  let serving = true
  const devices = Array.from({ length: PAIRS }, (_, i) => `pair-${i}`)
  const deviceLoops = devices.map(async (device) => {
    let cursor = startCursor
    while (serving) {
      const res = await request('GET', paths.poll(device, cursor), server.token)
      for (const command of res.body ?? []) {
        cursor = command.timestamp
        await request('PUT', paths.update(device, command.id), server.token, { status: 'Done', result: { ok: true } })
      }
    }
  })
  // Paced clients start spread over one think interval (no synchronised burst), and the first
  // 500 ms are not recorded: the numbers describe the steady state.
  const recordFrom = performance.now() + 500
  const clientLoops = devices.map(async (device) => {
    if (thinkMs > 0) await sleep(Math.random() * 2 * thinkMs)
    while (running) {
      const started = performance.now()
      const posted = await request('POST', paths.post(device), server.token, { command: 'ping', parameters: { n: 1 } })
      const done = await request('GET', paths.wait(device, posted.body.id), server.token)
      if (done.status !== 200 || done.body.status !== 'Done') throw new Error(`round trip failed: ${done.status}`)
      if (started >= recordFrom) latencies.push(performance.now() - started)
      if (thinkMs > 0) await sleep(Math.random() * 2 * thinkMs)
    }
  })
  await sleep(durationMs)
  running = false
  await Promise.all(clientLoops)
  serving = false
  // Wake the device loops still parked, so they notice the stop.
  await Promise.all(devices.map((device) => request('POST', paths.post(device), server.token, { command: 'stop' })))
  await Promise.all(deviceLoops)
  return latencies.sort((a, b) => a - b)
}

/**
 * Where a mode's device loops start: the stamp of a command written just now. Not the server's
 * clock: above 1,000 writes/s stamps run ahead of it (each write takes the next millisecond), so a
 * cursor from the clock would hand the devices the tail of the previous mode again, and a device
 * still draining it when the mode ends leaves its client's wait unanswered.
 */
export async function messageCursor (server: ChildServer): Promise<string> {
  const marker = await request('POST', `${server.url}/device/bench-device/command`, server.token, { command: 'cursor' })
  return marker.body.timestamp as string
}

export async function commandRoundTrip (): Promise<{ p99: number }> {
  const children: ChildServer[] = []
  const modes = [{ name: 'saturated', think: 0 }, { name: `paced ~${THINK_MS} ms`, think: THINK_MS }]
  try {
    const baseline = await startChild('baseline-server')
    children.push(baseline)
    const basePaths: Paths = {
      poll: (d) => `${baseline.url}/device/${d}/command/poll`,
      post: (d) => `${baseline.url}/device/${d}/command`,
      update: (d, id) => `${baseline.url}/device/${d}/command/${id}`,
      wait: (d, id) => `${baseline.url}/device/${d}/command/${id}/poll`
    }
    await run(baseline, basePaths, '', 1000, 0)
    const base: number[][] = []
    for (const mode of modes) base.push(await run(baseline, basePaths, '', DURATION_MS, mode.think))
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
    await run(hub, paths, await messageCursor(hub), 1000, 0)
    const ours: number[][] = []
    for (const mode of modes) ours.push(await run(hub, paths, await messageCursor(hub), DURATION_MS, mode.think))

    const row = (name: string, l: number[]): Array<string | number> => [name, l.length / (DURATION_MS / 1000 - 0.5), percentile(l, 50), percentile(l, 99), l[l.length - 1] ?? NaN]
    const rows: Array<Array<string | number>> = []
    modes.forEach((mode, i) => {
      rows.push(row(`${mode.name}: bare Fastify`, base[i]!))
      rows.push(row(`${mode.name}: devicehub`, ours[i]!))
      rows.push([`${mode.name}: ratio`, ours[i]!.length / base[i]!.length, percentile(ours[i]!, 50) / percentile(base[i]!, 50), percentile(ours[i]!, 99) / percentile(base[i]!, 99), ''])
    })
    printTable(`(b) command round trip (post -> device poll -> update -> wait), ${PAIRS} device/client pairs, ${DURATION_MS / 1000} s per mode (${benchDatabaseLabel()})`, ['mode: server', 'round trips/s', 'p50 ms', 'p99 ms', 'max ms'], rows)
    const p99 = percentile(ours[1]!, 99)
    console.log(`target: p99 < 50 ms (paced) -> ${p99 < 50 ? 'met' : 'NOT met'} (${p99.toFixed(1)} ms); saturated p99 ${percentile(ours[0]!, 99).toFixed(1)} ms`)
    return { p99 }
  } finally {
    for (const child of children) await child.stop()
  }
}
