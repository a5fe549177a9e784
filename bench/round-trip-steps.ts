/**
 * Where a paced command round trip's time goes, step by step (issue #26's (b) and (d)): the
 * (b) workload, paced, with each step timed from the bench's clock:
 *
 * - `post`: the client's POST until its 201;
 * - `deliver`: the POST until the device's long poll returns the command (often before the 201);
 * - `update`: the device's PUT until its answer;
 * - `answer`: the device's PUT until the client's wait returns the update (often before the PUT's answer);
 * - `total`: the POST until the wait's answer.
 *
 * Run: `node --import tsx bench/round-trip-steps.ts [sqlite|pg|pg2] [seconds]` (pg and pg2 need
 * BENCH_PG_URL; pg2 puts devices on one instance and clients on another).
 */
import type { ChildServer } from './lib.js'
import { percentile, printTable, request, sleep, startChild } from './lib.js'
import { dropBenchDatabases } from './pg.js'
import { messageCursor, PAIRS, THINK_MS } from './scenarios/command-round-trip.js'

type Step = 'post' | 'deliver' | 'update' | 'answer' | 'total'
const STEPS: Step[] = ['post', 'deliver', 'update', 'answer', 'total']

async function measure (device: ChildServer, client: ChildServer, durationMs: number): Promise<Record<Step, number[]>> {
  const times: Record<Step, number[]> = { post: [], deliver: [], update: [], answer: [], total: [] }
  const received = new Map<number, number>()
  const updating = new Map<number, number>()
  let running = true
  let serving = true
  const recordFrom = performance.now() + 500
  const cursor0 = await messageCursor(device)
  const devices = Array.from({ length: PAIRS }, (_, i) => `pair-${i}`)
  const deviceLoops = devices.map(async (d) => {
    let cursor = cursor0
    while (serving) {
      const res = await request('GET', `${device.url}/device/${d}/command/poll?waitTimeout=30&names=ping,stop&timestamp=${cursor}`, device.token)
      const got = performance.now()
      for (const command of res.body ?? []) {
        cursor = command.timestamp
        received.set(command.id as number, got)
        updating.set(command.id as number, performance.now())
        const before = performance.now()
        await request('PUT', `${device.url}/device/${d}/command/${command.id}`, device.token, { status: 'Done', result: { ok: true } })
        if (before >= recordFrom) times.update.push(performance.now() - before)
      }
    }
  })
  const clientLoops = devices.map(async (d) => {
    await sleep(Math.random() * 2 * THINK_MS)
    while (running) {
      const started = performance.now()
      const res = await request('POST', `${client.url}/device/${d}/command`, client.token, { command: 'ping', parameters: { n: 1 } })
      const id = res.body.id as number
      const at = performance.now()
      const done = await request('GET', `${client.url}/device/${d}/command/${id}/poll?waitTimeout=30`, client.token)
      const end = performance.now()
      if (done.status !== 200) throw new Error(`wait failed: ${done.status}`)
      if (started >= recordFrom) {
        times.post.push(at - started)
        times.total.push(end - started)
        times.deliver.push(received.get(id)! - started)
        times.answer.push(end - updating.get(id)!)
      }
      await sleep(Math.random() * 2 * THINK_MS)
    }
  })
  await sleep(durationMs)
  running = false
  await Promise.all(clientLoops)
  serving = false
  await Promise.all(devices.map((d) => request('POST', `${client.url}/device/${d}/command`, client.token, { command: 'stop' })))
  await Promise.all(deviceLoops)
  for (const step of STEPS) times[step].sort((a, b) => a - b)
  return times
}

const mode = process.argv[2] ?? 'sqlite'
const seconds = Number(process.argv[3] ?? 5)
const children: ChildServer[] = []
try {
  const a = await startChild('devicehub-server', { sqlite: mode === 'sqlite' })
  children.push(a)
  const b = mode === 'pg2' ? await startChild('devicehub-server', { db: a.db }) : a
  if (b !== a) children.push(b)
  await measure(a, b, 1000)
  const t = await measure(a, b, seconds * 1000)
  printTable(`paced round trip steps (${mode}, ${PAIRS} pairs, ${seconds} s)`, ['step', 'count', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
    STEPS.map((s) => [s, t[s].length, percentile(t[s], 50), percentile(t[s], 90), percentile(t[s], 99), t[s][t[s].length - 1] ?? NaN]))
} finally {
  for (const child of children) await child.stop()
  await dropBenchDatabases()
}
