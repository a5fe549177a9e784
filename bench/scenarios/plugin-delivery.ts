/**
 * (h) Plugin delivery: one plugin subscribed to every notification on the plugin proxy while 50
 * connections insert notifications over REST. Delivered messages/s against the insert rate, and
 * two latencies: send-to-delivery (from the moment the insert request was sent, carried in its
 * parameters, so it includes the REST insert's own queueing) and response-to-delivery (delivery
 * time minus the time the insert's 201 arrived; negative when the delivery came first).
 */
import autocannon from 'autocannon'
import { WebSocket } from 'ws'
import type { ChildServer } from '../lib.js'
import { benchDatabaseLabel } from '../pg.js'
import { percentile, printTable, request, sleep, startChild } from '../lib.js'

const CONNECTIONS = 50
const DURATION_S = 5

interface Run {
  inserted: number
  insertP99: number
  delivered: number
  deliveredPerSecond: number
  /** How long the last deliveries took to arrive after the inserts stopped. */
  drainMs: number
  p50: number
  p99: number
  max: number
  duplicates: number
  /** Delivery time minus the insert response's arrival, per notification. */
  afterResponseP50: number
  afterResponseP99: number
}

async function run (hub: ChildServer, label: string): Promise<Run> {
  const registration = await request('POST', `${hub.url}/plugin?returnNotifications=true`, hub.token, { name: `bench-${label}` })
  if (registration.status !== 201) throw new Error(`plugin registration: ${registration.status}`)
  const { proxyEndpoint, accessToken, topicName } = registration.body as { proxyEndpoint: string, accessToken: string, topicName: string }
  const ws = new WebSocket(proxyEndpoint)
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  const latencies: number[] = []
  const deliveredAt = new Map<number, number>()
  const respondedAt = new Map<number, number>()
  let duplicates = 0
  let first = 0
  let last = 0
  const replies: Array<(frame: { s: number }) => void> = []
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { id?: string, t: string, s: number, p: { m: string } }
    if (frame.id !== undefined) return replies.shift()?.(frame)
    const now = Date.now()
    const { id, parameters } = (JSON.parse(frame.p.m) as { b: { notification: { id: number, parameters: { sent: number } } } }).b.notification
    latencies.push(now - parameters.sent)
    if (deliveredAt.has(id)) duplicates++
    deliveredAt.set(id, now)
    if (first === 0) first = now
    last = now
  })
  const ask = (message: object): Promise<{ s: number }> => new Promise((resolve) => {
    replies.push(resolve)
    ws.send(JSON.stringify(message))
  })
  if ((await ask({ id: 'a', t: 'plugin', a: 'authenticate', p: { token: accessToken } })).s !== 0) throw new Error('authenticate failed')
  if ((await ask({ id: 's', t: 'topic', a: 'subscribe', p: { t: [topicName] } })).s !== 0) throw new Error('subscribe failed')

  const result = await autocannon({
    url: `${hub.url}/device/bench-device/notification`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers: { authorization: `Bearer ${hub.token}`, 'content-type': 'application/json' },
    requests: [{
      setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify({ notification: 'temperature', parameters: { value: 21.5, sent: Date.now() } }) }),
      onResponse: (status: number, body: string) => {
        if (status === 201) respondedAt.set((JSON.parse(body) as { id: number }).id, Date.now())
      }
    }]
  })
  const inserted = result['2xx']
  const stopped = Date.now()
  const deadline = stopped + 30_000
  while (latencies.length < inserted && Date.now() < deadline) await sleep(10)
  ws.close()
  const sorted = [...latencies].sort((a, b) => a - b)
  const afterResponse = [...respondedAt].filter(([id]) => deliveredAt.has(id)).map(([id, at]) => deliveredAt.get(id)! - at).sort((a, b) => a - b)
  return {
    inserted,
    insertP99: result.latency.p99,
    delivered: latencies.length,
    deliveredPerSecond: latencies.length / Math.max(0.001, (last - first) / 1000),
    drainMs: Math.max(0, last - stopped),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    duplicates,
    afterResponseP50: percentile(afterResponse, 50),
    afterResponseP99: percentile(afterResponse, 99)
  }
}

export async function pluginDelivery (): Promise<Run> {
  const hub = await startChild('devicehub-server')
  try {
    await run(hub, 'warm-up')
    const measured = await run(hub, 'measured')
    printTable(`(h) plugin delivery: 1 plugin, all notifications, ${CONNECTIONS} REST inserters, ${DURATION_S} s (${benchDatabaseLabel()})`,
      ['inserted', 'insert/s', 'insert p99 ms', 'delivered', 'delivered/s', 'dup', 'drain ms', 'send->delivery p50/p99/max ms', '201->delivery p50/p99 ms'],
      [[measured.inserted, measured.inserted / DURATION_S, measured.insertP99, measured.delivered, measured.deliveredPerSecond, measured.duplicates, measured.drainMs,
        `${measured.p50} / ${measured.p99} / ${measured.max}`, `${measured.afterResponseP50} / ${measured.afterResponseP99}`]])
    // autocannon leaves requests still in flight at the end uncounted, so `delivered` may exceed `inserted`.
    const keepsUp = measured.delivered >= measured.inserted && measured.duplicates === 0 && measured.drainMs < 1000
    console.log(`target: every insert delivered once, keeping up (drain < 1 s) -> ${keepsUp ? 'met' : 'NOT met'}; ` +
      `p99 < 50 ms after the insert's response -> ${measured.afterResponseP99 < 50 ? 'met' : 'NOT met'}`)
    return measured
  } finally {
    await hub.stop()
  }
}
