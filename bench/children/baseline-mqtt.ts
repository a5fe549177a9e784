/**
 * The bare-broker baseline of `bench/mqtt.ts`: an aedes broker with its default in-memory
 * persistence and no authentication, and a bare `ws` server, doing the same fan-out as devicehub's
 * MQTT endpoint without storage: a telemetry PUBLISH on `dh/notification/…/<deviceId>/<name>` is
 * pushed at once to the WebSocket sockets subscribed to that device (the same frames as
 * devicehub's `notification/subscribe`). What the devicehub numbers are divided by.
 */
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { Aedes } from 'aedes'
import { WebSocketServer } from 'ws'
import type { WebSocket } from 'ws'

const broker = await Aedes.createBroker()
const mqtt = createServer((socket) => broker.handle(socket))
await new Promise<void>((resolve) => mqtt.listen(0, '127.0.0.1', resolve))

const subscribers = new Map<string, Set<{ socket: WebSocket, id: number }>>()
let nextSubscription = 0
let nextId = 0
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false })
await new Promise<void>((resolve) => wss.once('listening', resolve))

wss.on('connection', (socket) => {
  const mine: Array<{ key: string, entry: { socket: WebSocket, id: number } }> = []
  socket.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { action: string, requestId?: unknown, deviceId?: string }
    const base = { action: frame.action, requestId: frame.requestId ?? null, status: 'success' }
    if (frame.action === 'notification/subscribe') {
      const key = frame.deviceId ?? '*'
      const entry = { socket, id: ++nextSubscription }
      if (!subscribers.has(key)) subscribers.set(key, new Set())
      subscribers.get(key)!.add(entry)
      mine.push({ key, entry })
      socket.send(JSON.stringify({ ...base, subscriptionId: entry.id }))
    } else {
      socket.send(JSON.stringify(base))
    }
  })
  socket.on('close', () => {
    for (const { key, entry } of mine) subscribers.get(key)?.delete(entry)
  })
})

// dh/notification/<networkId>/<deviceTypeId>/<deviceId>/<name>: parse the payload, push it.
broker.on('publish', (packet, client) => {
  if (client === null || !packet.topic.startsWith('dh/notification/')) return
  const [, , networkId, deviceTypeId, deviceId, name] = packet.topic.split('/')
  const parameters = JSON.parse(packet.payload.toString()) as unknown
  const notification = { id: ++nextId, notification: name, deviceId, networkId: Number(networkId), deviceTypeId: Number(deviceTypeId), timestamp: new Date().toISOString().slice(0, 23), parameters }
  for (const key of [deviceId!, '*']) {
    for (const s of subscribers.get(key) ?? []) {
      s.socket.send(`{"action":"notification/insert","notification":${JSON.stringify(notification)},"subscriptionId":${s.id}}`)
    }
  }
})

const gc = (globalThis as { gc?: () => void }).gc
process.on('message', (message: { type: string }) => {
  if (message.type === 'cpu') {
    const { user, system } = process.cpuUsage()
    process.send!({ type: 'cpu', cpu: user + system, system })
  } else if (message.type === 'stats') {
    gc?.()
    process.send!({ type: 'stats', rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed, waiters: broker.connectedClients })
  } else if (message.type === 'stop') {
    wss.close()
    mqtt.close()
    broker.close(() => process.exit(0))
  }
})
const { port } = mqtt.address() as AddressInfo
const { port: wsPort } = wss.address() as AddressInfo
process.send!({ type: 'ready', url: `http://127.0.0.1:${wsPort}/api/rest`, token: 'bare', mqtt: `mqtt://127.0.0.1:${port}` })
