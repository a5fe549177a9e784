/**
 * The bare-Fastify baseline: the same request shapes with no auth, no validation beyond JSON
 * parsing and no storage (in-memory only). What the devicehub numbers are divided by.
 */
import fastifyWebsocket from '@fastify/websocket'
import Fastify from 'fastify'
import type { WebSocket } from 'ws'

interface Command { id: number, command: string, status: string | null, result: unknown, isUpdated: boolean, timestamp: string }

const app = Fastify({ logger: false })
let nextId = 0
const pendingByDevice = new Map<string, Command[]>()
const deviceWaiters = new Map<string, Array<(c: Command[]) => void>>()
const commands = new Map<number, Command>()
const commandWaiters = new Map<number, Array<(c: Command) => void>>()
let parked: Array<(items: unknown[]) => void> = []
// The WebSocket baseline: authenticate and subscribe answer at once; a notification is pushed to
// the subscribers of its device ('*' = every device). No auth, no storage.
const subscribers = new Map<string, Set<{ socket: WebSocket, id: number }>>()
let subscriptionCount = 0
await app.register(fastifyWebsocket)

function push (deviceId: string, notification: object): void {
  for (const key of [deviceId, '*']) {
    for (const s of subscribers.get(key) ?? []) {
      s.socket.send(`{"action":"notification/insert","notification":${JSON.stringify(notification)},"subscriptionId":${s.id}}`)
    }
  }
}

app.get('/websocket', { websocket: true }, (socket) => {
  const mine: Array<{ key: string, entry: { socket: WebSocket, id: number } }> = []
  socket.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { action: string, requestId?: unknown, deviceId?: string, notification?: { notification: string, parameters?: unknown } }
    const base = { action: frame.action, requestId: frame.requestId ?? null, status: 'success' }
    if (frame.action === 'notification/subscribe') {
      const key = frame.deviceId ?? '*'
      const entry = { socket, id: ++subscriptionCount }
      if (!subscribers.has(key)) subscribers.set(key, new Set())
      subscribers.get(key)!.add(entry)
      mine.push({ key, entry })
      socket.send(JSON.stringify({ ...base, subscriptionId: entry.id }))
    } else if (frame.action === 'notification/insert') {
      const notification = { id: ++nextId, notification: frame.notification?.notification, deviceId: frame.deviceId, networkId: 1, deviceTypeId: 1, timestamp: new Date().toISOString().slice(0, 23), parameters: frame.notification?.parameters ?? null }
      socket.send(JSON.stringify({ ...base, notification: { id: notification.id, timestamp: notification.timestamp } }))
      push(frame.deviceId ?? '', notification)
    } else {
      socket.send(JSON.stringify(base))
    }
  })
  socket.on('close', () => {
    for (const { key, entry } of mine) subscribers.get(key)?.delete(entry)
  })
})

app.post<{ Params: { d: string }, Body: { notification: string, parameters?: unknown } }>('/device/:d/notification', async (request, reply) => {
  const notification = { id: ++nextId, notification: request.body.notification, deviceId: request.params.d, networkId: 1, deviceTypeId: 1, timestamp: new Date().toISOString().slice(0, 23), parameters: request.body.parameters ?? null }
  push(request.params.d, notification)
  return reply.code(201).send({ id: notification.id, timestamp: notification.timestamp })
})

app.post('/notification', async (request, reply) => {
  void request.body
  return reply.code(201).send({ id: ++nextId, timestamp: new Date().toISOString().slice(0, 23) })
})

app.post<{ Params: { d: string }, Body: { command: string } }>('/device/:d/command', async (request, reply) => {
  const command: Command = { id: ++nextId, command: request.body.command, status: null, result: null, isUpdated: false, timestamp: new Date().toISOString().slice(0, 23) }
  commands.set(command.id, command)
  const waiters = deviceWaiters.get(request.params.d)
  if (waiters !== undefined && waiters.length > 0) waiters.shift()!([command])
  else pendingByDevice.set(request.params.d, [...(pendingByDevice.get(request.params.d) ?? []), command])
  return reply.code(201).send({ id: command.id, timestamp: command.timestamp })
})

app.get<{ Params: { d: string } }>('/device/:d/command/poll', async (request) => {
  const queued = pendingByDevice.get(request.params.d)
  if (queued !== undefined && queued.length > 0) {
    pendingByDevice.delete(request.params.d)
    return queued
  }
  return new Promise((resolve) => {
    deviceWaiters.set(request.params.d, [...(deviceWaiters.get(request.params.d) ?? []), resolve])
  })
})

app.put<{ Params: { d: string, id: string }, Body: { status: string, result: unknown } }>('/device/:d/command/:id', async (request, reply) => {
  const command = commands.get(Number(request.params.id))!
  command.status = request.body.status
  command.result = request.body.result
  command.isUpdated = true
  for (const wake of commandWaiters.get(command.id) ?? []) wake(command)
  commandWaiters.delete(command.id)
  return reply.code(204).send()
})

app.get<{ Params: { d: string, id: string } }>('/device/:d/command/:id/poll', async (request) => {
  const command = commands.get(Number(request.params.id))!
  if (command.isUpdated) return command
  return new Promise((resolve) => {
    commandWaiters.set(command.id, [...(commandWaiters.get(command.id) ?? []), resolve])
  })
})

app.get('/poll', async () => new Promise((resolve) => { parked.push(resolve) }))
app.post('/ring', async (request, reply) => {
  void request.body
  const item = [{ id: ++nextId, notification: 'ring', deviceId: 'bench-device', networkId: 1, deviceTypeId: 1, timestamp: new Date().toISOString().slice(0, 23), parameters: null }]
  const waiting = parked
  parked = []
  for (const wake of waiting) wake(item)
  return reply.code(201).send({ id: nextId })
})

const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.on('message', (message: { type: string }) => {
  if (message.type === 'cpu') {
    const { user, system } = process.cpuUsage()
    process.send!({ type: 'cpu', cpu: user + system, system })
  } else if (message.type === 'stats') {
    (globalThis as { gc?: () => void }).gc?.()
    process.send!({ type: 'stats', rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed, waiters: parked.length + [...subscribers.values()].reduce((n, set) => n + set.size, 0) })
  }
  else if (message.type === 'stop') app.close().finally(() => process.exit(0))
})
process.send!({ type: 'ready', url: address, token: 'none' })
