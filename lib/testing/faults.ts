/**
 * Server-side fault injection for the test rig: latency, failed requests, refused connections,
 * dropped or delayed pushes and WebSocket disconnects, for one device or for all. The rig's own
 * requests (its admin client: sending commands, reading the feed a test asserts on) are exempt,
 * so a fault hits the firmware and the clients under test, never the test's own view. Faults live in
 * the rig's own Fastify hooks, outside devicehub's routes, so nothing of it ships in a server.
 * Every time a fault fires it is recorded (and written to the transcript).
 */
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { WebSocket, WebSocketServer } from 'ws'
import { redactUrl } from '../http/build-server.js'
import { deviceOfRequest } from './device-of-request.js'
import type { Transcript } from './transcript.js'

/** Limits a fault to the requests about one device (default: every request). */
export interface FaultScope {
  device?: string
}

export type FaultKind = 'latency' | 'http-error' | 'refuse-connection' | 'drop-push' | 'delay-push' | 'websocket-disconnect'

/** One time a fault fired. */
export interface FaultRecord {
  at: string
  kind: FaultKind
  device?: string
  url?: string
  detail?: string
}

export interface Faults {
  /** Every matching request waits `ms` before it is handled, until cleared. */
  latency(ms: number, scope?: FaultScope): void
  /** The next `count` matching requests answer `status` (default 503) with the contract's error body. */
  failRequests(count: number, options?: FaultScope & { status?: number, message?: string }): void
  /**
   * The next `count` matching requests (default: until cleared) have their connection cut
   * without an answer. Without a device, new TCP connections are closed as they arrive.
   */
  refuseConnections(count?: number, scope?: FaultScope): void
  /**
   * The next `count` pushes (default: until cleared) are lost: a long-poll answer carrying items
   * has its connection cut, a WebSocket push frame is not sent.
   */
  dropPushes(count?: number, scope?: FaultScope): void
  /** Pushes (long-poll answers carrying items, WebSocket push frames) are held `ms`, until cleared. */
  delayPushes(ms: number, scope?: FaultScope): void
  /**
   * Cuts open WebSocket connections now, without a close frame (the client sees 1006, as when
   * the network drops): every one, or those that named the device (its `deviceId` in a frame, or
   * the device's rig token). Returns how many were cut.
   */
  disconnectWebSockets(scope?: FaultScope): number
  /** Removes every active fault (the record stays). */
  clear(): void
  /** Every time a fault fired, oldest first. */
  readonly record: readonly FaultRecord[]
}

interface Rule {
  kind: FaultKind
  device?: string
  remaining: number
  ms?: number
  status?: number
  message?: string
}

export interface FaultOptions {
  transcript: Transcript
  /** Requests the faults leave alone (the rig's own). */
  exempt?: (request: FastifyRequest) => boolean
  /** The device a token was minted for by the rig, if any. */
  deviceOfToken?: (token: string) => string | undefined
}

const POLL_PATH = /\/poll(?:\?|$)/
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Installs the hooks on `app` (before it listens) and returns the controls.
 *
 * @example
 * const faults = installFaults(app, transcript)
 * faults.failRequests(2, { device: 'fw-1', status: 503 })
 */
export function installFaults (app: FastifyInstance, options: FaultOptions): Faults {
  const { transcript, exempt = () => false, deviceOfToken = () => undefined } = options
  let rules: Rule[] = []
  const record: FaultRecord[] = []
  /** Open WebSocket connections and the devices each has named. */
  const sockets = new Map<WebSocket, Set<string>>()

  const fire = (kind: FaultKind, details: Omit<FaultRecord, 'at' | 'kind'> = {}): void => {
    record.push({ at: new Date().toISOString(), kind, ...details })
    transcript.write({ type: 'fault', kind, ...details })
  }
  /** The first active rule of `kind` that applies to `device`; consumes one use. */
  const take = (kind: FaultKind, device: string | undefined): Rule | undefined => {
    const rule = rules.find((r) => r.kind === kind && r.remaining > 0 && (r.device === undefined || r.device === device))
    if (rule === undefined) return undefined
    rule.remaining--
    if (rule.remaining === 0) rules = rules.filter((r) => r !== rule)
    return rule
  }
  const add = (rule: Rule): void => {
    if (!(rule.remaining > 0)) throw new RangeError('a fault needs a positive count')
    rules.push(rule)
  }

  app.server.on('connection', (socket: Socket) => {
    const rule = take('refuse-connection', undefined)
    if (rule === undefined || rule.device !== undefined) return
    fire('refuse-connection', { detail: 'TCP connection closed on arrival' })
    socket.destroy()
  })
  const webSockets = (app as unknown as { websocketServer?: WebSocketServer }).websocketServer
  webSockets?.on('connection', (socket: WebSocket, request: IncomingMessage) => watchWebSocket(socket, request))

  function watchWebSocket (socket: WebSocket, request: IncomingMessage): void {
    const devices = new Set<string>()
    const named = (token: unknown): void => {
      const device = typeof token === 'string' ? deviceOfToken(token) : undefined
      if (device !== undefined) devices.add(device)
    }
    named(/^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1])
    sockets.set(socket, devices)
    socket.once('close', () => sockets.delete(socket))
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      const frame = isBinary ? undefined : parseObject(data.toString())
      if (typeof frame?.deviceId === 'string') devices.add(frame.deviceId)
      if (frame?.action === 'authenticate') named(frame.token)
    })
    const send = socket.send.bind(socket) as (data: unknown, ...rest: unknown[]) => void
    socket.send = ((data: unknown, ...rest: unknown[]) => {
      const push = rules.length > 0 && typeof data === 'string' ? parseObject(data) : undefined
      if (push === undefined || typeof push.subscriptionId !== 'number' || push.status !== undefined) return send(data, ...rest)
      const item = (push.command ?? push.notification) as { deviceId?: string } | undefined
      const device = item?.deviceId
      if (take('drop-push', device) !== undefined) {
        fire('drop-push', { device, detail: `WebSocket ${String(push.action)}` })
        return
      }
      const delay = rules.find((r) => r.kind === 'delay-push' && (r.device === undefined || r.device === device))
      if (delay === undefined) return send(data, ...rest)
      fire('delay-push', { device, detail: `WebSocket ${String(push.action)}, ${delay.ms} ms` })
      setTimeout(() => send(data, ...rest), delay.ms).unref()
    }) as WebSocket['send']
  }

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (rules.length === 0 || exempt(request)) return
    const device = deviceOfRequest(request.url)
    const url = redactUrl(request.url)
    const refuse = rules.some((r) => r.kind === 'refuse-connection' && r.device !== undefined)
      ? take('refuse-connection', device)
      : undefined
    if (refuse !== undefined) {
      fire('refuse-connection', { device, url })
      reply.hijack()
      request.raw.socket.destroy()
      return
    }
    const slow = rules.find((r) => r.kind === 'latency' && (r.device === undefined || r.device === device))
    if (slow !== undefined) {
      fire('latency', { device, url, detail: `${slow.ms} ms` })
      await sleep(slow.ms!)
    }
    const fail = take('http-error', device)
    if (fail !== undefined) {
      fire('http-error', { device, url, detail: String(fail.status) })
      return reply.code(fail.status!).send({ error: fail.status, message: fail.message })
    }
  })

  app.addHook('onSend', async (request, reply, payload) => {
    if (!POLL_PATH.test(request.url) || reply.statusCode !== 200 || payload === '[]') return payload
    const device = deviceOfRequest(request.url)
    const url = redactUrl(request.url)
    if (rules.length > 0 && !exempt(request)) {
      if (take('drop-push', device) !== undefined) {
        fire('drop-push', { device, url })
        request.raw.socket.destroy()
        return payload
      }
      const delay = rules.find((r) => r.kind === 'delay-push' && (r.device === undefined || r.device === device))
      if (delay !== undefined) {
        fire('delay-push', { device, url, detail: `${delay.ms} ms` })
        await sleep(delay.ms!)
      }
    }
    const items = typeof payload === 'string' && payload.startsWith('[') ? (JSON.parse(payload) as unknown[]).length : 1
    transcript.write({ type: 'push', via: 'long-poll', url, device, items })
    return payload
  })

  return {
    latency: (ms, scope = {}) => add({ kind: 'latency', device: scope.device, remaining: Infinity, ms }),
    failRequests: (count, options = {}) => add({
      kind: 'http-error',
      device: options.device,
      remaining: count,
      status: options.status ?? 503,
      message: options.message ?? 'Service unavailable (injected by the test rig)'
    }),
    refuseConnections: (count = Infinity, scope = {}) => add({ kind: 'refuse-connection', device: scope.device, remaining: count }),
    dropPushes: (count = Infinity, scope = {}) => add({ kind: 'drop-push', device: scope.device, remaining: count }),
    delayPushes: (ms, scope = {}) => add({ kind: 'delay-push', device: scope.device, remaining: Infinity, ms }),
    disconnectWebSockets (scope = {}) {
      let cut = 0
      for (const [socket, devices] of [...sockets]) {
        if (scope.device !== undefined && !devices.has(scope.device)) continue
        fire('websocket-disconnect', { device: scope.device })
        socket.terminate()
        cut++
      }
      return cut
    },
    clear () {
      rules = []
    },
    record
  }
}

function parseObject (text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}
