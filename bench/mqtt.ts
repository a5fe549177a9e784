/**
 * `npm run bench -- mqtt`: devicehub's MQTT endpoint (issue #25) beside a bare aedes broker
 * (bench/children/baseline-mqtt.ts: no authentication, no storage, in-memory persistence) doing
 * the same fan-out in the same run:
 *
 * - rate: 100 MQTT devices publish telemetry (QoS 1, closed loop on PUBACK) on
 *   `dh/notification/<networkId>/<deviceTypeId>/<deviceId>/<name>`, each device watched by one
 *   WebSocket `notification/subscribe`; pushes received per second (devicehub stores each
 *   notification before it pushes it);
 * - latency: the same devices publish at 1,000/s (QoS 0, round robin), publish to WebSocket push,
 *   p50/p99/max, same clock (the bench process);
 * - memory: 10,000 idle MQTT connections (raw sockets: CONNECT, CONNACK, nothing else), server
 *   RSS and heap per connection after a GC.
 *
 * Beside them, each server's CPU time per push (closed loop) and per publish (paced phase), read
 * from the child's `process.cpuUsage()`: steadier than wall-clock figures on a shared machine.
 *
 * Targets printed, never asserted: rate >= 50% of the bare broker's; push p99 within 2x of bare;
 * under 30 KB RSS per idle connection.
 */
import { connect as connectTcp } from 'node:net'
import type { Socket } from 'node:net'
import mqtt from 'mqtt'
import type { MqttClient } from 'mqtt'
import { WebSocket } from 'ws'
import type { ChildServer } from './lib.js'
import { percentile, printTable, sleep, startChild } from './lib.js'
import { benchDatabaseLabel } from './pg.js'
import { benchWarmupMs } from './targets.js'

const DEVICES = 100
const RATE_S = 5
const RATE = 1000
const LATENCY_MS = 5000
const WARMUP_MS = 500
/** `BENCH_MQTT_IDLE=<n>` connects fewer idle clients (0: no memory measure, for quicker runs while profiling). */
const IDLE = Number(process.env.BENCH_MQTT_IDLE ?? 10_000)
const BATCH = 250

interface Subscriber { socket: WebSocket, onPush?: (frame: { notification: { parameters: { sentAt?: number } | null } }, at: number) => void }

/** One WebSocket per device, authenticated and subscribed to its notifications. */
async function subscribe (server: ChildServer, deviceId: string): Promise<Subscriber> {
  const socket = new WebSocket(`${server.url.replace(/^http/, 'ws').replace(/\/rest$/, '')}/websocket`, { perMessageDeflate: false })
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject) })
  const subscriber: Subscriber = { socket }
  const replies: Array<(frame: Record<string, unknown>) => void> = []
  socket.on('message', (data) => {
    const at = performance.now()
    const frame = JSON.parse(data.toString()) as Record<string, unknown>
    if (frame.requestId !== undefined) replies.shift()?.(frame)
    else subscriber.onPush?.(frame as never, at)
  })
  const ask = (frame: Record<string, unknown>): Promise<Record<string, unknown>> => new Promise((resolve) => {
    replies.push(resolve)
    socket.send(JSON.stringify({ ...frame, requestId: replies.length }))
  })
  if ((await ask({ action: 'authenticate', token: server.token })).status !== 'success') throw new Error('authenticate failed')
  const reply = await ask({ action: 'notification/subscribe', deviceId })
  if (reply.status !== 'success') throw new Error(`subscribe: ${JSON.stringify(reply)}`)
  return subscriber
}

async function devices (server: ChildServer): Promise<{ publishers: MqttClient[], subscribers: Subscriber[] }> {
  const publishers = await Promise.all(Array.from({ length: DEVICES }, async (_, i) => mqtt.connectAsync(server.mqtt!, {
    clientId: `pair-${i}`, username: 'dhadmin', password: server.token, reconnectPeriod: 0, protocolVersion: 4
  })))
  const subscribers = await Promise.all(Array.from({ length: DEVICES }, (_, i) => subscribe(server, `pair-${i}`)))
  return { publishers, subscribers }
}

function close (publishers: MqttClient[], subscribers: Subscriber[]): void {
  for (const p of publishers) p.end(true)
  for (const s of subscribers) s.socket.terminate()
}

/** The bench devices are in network 1, device type 1 (bench/children/devicehub-server.ts). */
const topic = (i: number, name: string): string => `dh/notification/1/1/pair-${i}/${name}`

async function rate (server: ChildServer): Promise<{ perSecond: number, published: number, cpuPerPushUs: number, systemPerPushUs: number }> {
  const { publishers, subscribers } = await devices(server)
  let received = 0
  for (const s of subscribers) s.onPush = () => { received++ }
  const run = async (ms: number): Promise<number> => {
    const stop = performance.now() + ms
    let published = 0
    await Promise.all(publishers.map(async (p, i) => {
      while (performance.now() < stop) {
        await p.publishAsync(topic(i, 'rate'), '{"value":21.5,"unit":"C"}', { qos: 1 })
        published++
      }
    }))
    return published
  }
  await run(benchWarmupMs()) // warm-up (bench/targets.ts)
  await sleep(500)
  received = 0
  const before = await server.cpuTimes()
  const published = await run(RATE_S * 1000)
  const pushed = received
  const after = await server.cpuTimes()
  close(publishers, subscribers)
  return {
    perSecond: pushed / RATE_S, published: published / RATE_S,
    cpuPerPushUs: (after.cpu - before.cpu) / pushed, systemPerPushUs: (after.system - before.system) / pushed
  }
}

async function latency (server: ChildServer): Promise<{ p50: number, p99: number, max: number, samples: number, sent: number, cpuPerPublishUs: number }> {
  const { publishers, subscribers } = await devices(server)
  const samples: number[] = []
  let started = performance.now()
  for (const s of subscribers) {
    s.onPush = (frame, at) => {
      const sentAt = frame.notification.parameters?.sentAt
      // By when it was sent: a warm-up push that arrives after the warm-up is still warm-up.
      if (typeof sentAt === 'number' && sentAt - started >= WARMUP_MS) samples.push(at - sentAt)
    }
  }
  const cpuBefore = await server.cpu()
  started = performance.now()
  let sent = 0
  while (performance.now() - started < LATENCY_MS + WARMUP_MS) {
    const tick = performance.now()
    for (let i = 0; i < RATE / 100; i++) {
      const device = sent % DEVICES
      sent++
      publishers[device]!.publish(topic(device, 'latency'), JSON.stringify({ sentAt: performance.now() }), { qos: 0 })
    }
    const wait = 10 - (performance.now() - tick)
    if (wait > 0) await sleep(wait)
  }
  await sleep(1000)
  // The server's CPU over a fixed workload (every publish of the paced phase, stored and pushed):
  // steadier than wall-clock rates on a shared machine.
  const cpuPerPublishUs = (await server.cpu() - cpuBefore) / sent
  close(publishers, subscribers)
  samples.sort((a, b) => a - b)
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples.at(-1) ?? NaN, samples: samples.length, sent, cpuPerPublishUs }
}

/** An MQTT 3.1.1 CONNECT by hand: a raw socket costs the bench process far less than an mqtt.js client. */
function connectPacket (clientId: string, username: string, password: string): Buffer {
  const field = (text: string): Buffer => {
    const bytes = Buffer.from(text)
    return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes])
  }
  // Protocol name, level 4, flags (username, password, clean session), keep alive 0 (none).
  const body = Buffer.concat([field('MQTT'), Buffer.from([4, 0xc2, 0, 0]), field(clientId), field(username), field(password)])
  const length: number[] = []
  let rest = body.length
  do {
    let byte = rest % 128
    rest = Math.floor(rest / 128)
    if (rest > 0) byte |= 0x80
    length.push(byte)
  } while (rest > 0)
  return Buffer.concat([Buffer.from([0x10, ...length]), body])
}

function idleConnection (server: ChildServer, clientId: string): Promise<Socket> {
  const url = new URL(server.mqtt!)
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(url.port), url.hostname, () => socket.write(connectPacket(clientId, 'dhadmin', server.token)))
    socket.once('data', (data) => {
      // CONNACK: 0x20 0x02 <flags> <return code>.
      if (data[0] === 0x20 && data[3] === 0) resolve(socket)
      else reject(new Error(`CONNACK refused: ${data.toString('hex')}`))
    })
    socket.once('error', reject)
  })
}

async function memory (server: ChildServer): Promise<{ perConnectionKb: number, heapPerConnectionKb: number, fullRssMb: number, connected: number }> {
  if (IDLE === 0) return { perConnectionKb: NaN, heapPerConnectionKb: NaN, fullRssMb: NaN, connected: 0 }
  await sleep(300)
  const idle = await server.stats()
  const sockets: Socket[] = []
  for (let i = 0; i < IDLE; i += BATCH) {
    sockets.push(...await Promise.all(Array.from({ length: Math.min(BATCH, IDLE - i) }, (_, j) => idleConnection(server, `idle-${i + j}`))))
  }
  await sleep(1000)
  const full = await server.stats()
  for (const socket of sockets) socket.destroy()
  return {
    perConnectionKb: (full.rss - idle.rss) / IDLE / 1024,
    heapPerConnectionKb: (full.heap - idle.heap) / IDLE / 1024,
    fullRssMb: full.rss / 1024 / 1024,
    connected: sockets.length
  }
}

interface Measured {
  rate: Awaited<ReturnType<typeof rate>>
  latency: Awaited<ReturnType<typeof latency>>
  memory: Awaited<ReturnType<typeof memory>>
}

/** The three measures against one server (exported for a one-off run against any child). */
export async function measure (server: ChildServer): Promise<Measured> {
  return { rate: await rate(server), latency: await latency(server), memory: await memory(server) }
}

export async function mqttBench (): Promise<{ rateRatio: number, p99Ratio: number, perConnectionKb: number, cpuPerPublishUs: number }> {
  const children: ChildServer[] = []
  try {
    const bareChild = await startChild('baseline-mqtt')
    children.push(bareChild)
    const bare = await measure(bareChild)
    await bareChild.stop()
    children.pop()
    const hubChild = await startChild('devicehub-server', { mqtt: true })
    children.push(hubChild)
    const ours = await measure(hubChild)
    const rateRatio = ours.rate.perSecond / bare.rate.perSecond
    const p99Ratio = ours.latency.p99 / bare.latency.p99
    printTable(`MQTT telemetry publish to WebSocket push, ${DEVICES} devices (${benchDatabaseLabel()})`,
      ['server', 'pushes/s (QoS 1, closed loop)', 'CPU µs / push (closed loop)', 'of which kernel µs', 'CPU µs / publish (paced)', 'push p50 ms', 'push p99 ms', 'push max ms', `pushes of ${RATE}/s`, 'RSS KB / idle connection', 'heap KB / idle connection', `RSS MB with ${IDLE}`], [
        ['bare aedes (no auth, no storage)', bare.rate.perSecond, bare.rate.cpuPerPushUs, bare.rate.systemPerPushUs, bare.latency.cpuPerPublishUs, bare.latency.p50, bare.latency.p99, bare.latency.max, bare.latency.samples, bare.memory.perConnectionKb, bare.memory.heapPerConnectionKb, bare.memory.fullRssMb],
        ['devicehub', ours.rate.perSecond, ours.rate.cpuPerPushUs, ours.rate.systemPerPushUs, ours.latency.cpuPerPublishUs, ours.latency.p50, ours.latency.p99, ours.latency.max, ours.latency.samples, ours.memory.perConnectionKb, ours.memory.heapPerConnectionKb, ours.memory.fullRssMb],
        ['ratio', rateRatio, ours.rate.cpuPerPushUs / bare.rate.cpuPerPushUs, ours.rate.systemPerPushUs / bare.rate.systemPerPushUs, ours.latency.cpuPerPublishUs / bare.latency.cpuPerPublishUs, ours.latency.p50 / bare.latency.p50, p99Ratio, ours.latency.max / bare.latency.max, '', ours.memory.perConnectionKb / bare.memory.perConnectionKb, '', '']
      ])
    const perConnectionKb = ours.memory.perConnectionKb
    console.log(`targets: rate >= 50% of bare -> ${rateRatio >= 0.5 ? 'met' : 'NOT met'} (${(rateRatio * 100).toFixed(0)}%); ` +
      `push p99 within 2x of bare -> ${p99Ratio <= 2 ? 'met' : 'NOT met'} (${p99Ratio.toFixed(2)}x); ` +
      (IDLE === 0 ? '< 30 KB per idle connection -> not measured (BENCH_MQTT_IDLE=0)' : `< 30 KB per idle connection -> ${perConnectionKb < 30 ? 'met' : 'NOT met'} (${perConnectionKb.toFixed(1)} KB)`))
    return { rateRatio, p99Ratio, perConnectionKb, cpuPerPublishUs: ours.latency.cpuPerPublishUs }
  } finally {
    for (const child of children) await child.stop()
  }
}
