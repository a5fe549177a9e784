/**
 * The plugin proxy endpoint `<context>/plugin/proxy` (contract §1, P1, P12) on the service's own
 * port, through @fastify/websocket: one {@link createProxySession} per connection, plus the
 * limits: frame size (the WebSocket server's maxPayload, close 1009), outbound buffer (close
 * 1008), ping every 30 s (no pong by the next ping: terminated) and the unauthenticated timeout.
 */
import type { FastifyInstance } from 'fastify'
import type { WebSocket } from 'ws'
import type { DeviceHub } from '../../core/devicehub.js'
import { FRAME_TOO_BIG, readFrame } from '../inbound-frame.js'
import { createProxySession } from './session.js'

export interface PluginProxyOptions {
  /** Largest inbound frame in bytes (default 64 KiB); larger ones close the connection with 1009. */
  maxFrameBytes?: number
  /** Outbound bytes queued per connection before it is closed with 1008 (default 512 KiB). */
  maxBufferedBytes?: number
  /** Ping interval in ms (default 30 s). */
  pingIntervalMs?: number
  /** A connection that has not authenticated by then is closed with 1008 (default 60 s). */
  authTimeoutMs?: number
  /** Frames received and not yet answered per connection; one more closes it with 1008 (default 1,000). */
  maxPendingFrames?: number
  /** The URL `proxyEndpoint` reports (default: derived from each request, like `webSocketServerUrl`). */
  url?: string
}

export const PLUGIN_PROXY_PATH = '/plugin/proxy'
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024
const DEFAULT_MAX_BUFFERED = 512 * 1024
const DEFAULT_PING_MS = 30_000
const DEFAULT_AUTH_TIMEOUT_MS = 60_000
/** Deliveries wait while more than this share of the outbound limit is queued. */
const BACKPRESSURE_SHARE = 0.5

/**
 * Registers the endpoint on `app` (already under the context prefix; @fastify/websocket
 * registered on it or an ancestor).
 *
 * @example
 * await app.register(async (ctx) => pluginProxyRoute(ctx, hub, {}), { prefix: '/api' })
 */
export function pluginProxyRoute (app: FastifyInstance, hub: DeviceHub, options: PluginProxyOptions): void {
  const maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED
  const maxFrame = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
  const authTimeout = options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS
  const sockets = new Map<WebSocket, { alive: boolean }>()

  const ping = setInterval(() => {
    for (const [socket, state] of sockets) {
      if (!state.alive) {
        socket.terminate()
        continue
      }
      state.alive = false
      socket.ping()
    }
  }, options.pingIntervalMs ?? DEFAULT_PING_MS)
  ping.unref()
  app.addHook('onClose', async () => clearInterval(ping))

  app.get(PLUGIN_PROXY_PATH, { websocket: true, schema: { hide: true } }, (socket) => {
    const state = { alive: true }
    sockets.set(socket, state)
    let closing = false
    const close = (code: number, reason: string): void => {
      if (closing) return
      closing = true
      socket.close(code, reason)
    }
    const session = createProxySession(hub, {
      send (text) {
        if (closing || socket.readyState !== socket.OPEN) return
        socket.send(text)
        // P12: a consumer that does not read is cut off rather than buffered without bound.
        if (socket.bufferedAmount > maxBuffered) close(1008, 'Outbound buffer limit exceeded')
      },
      close,
      ready () {
        if (socket.bufferedAmount <= maxBuffered * BACKPRESSURE_SHARE) return undefined
        return new Promise<void>((resolve) => {
          const check = (): void => {
            if (closing || socket.readyState !== socket.OPEN || socket.bufferedAmount <= maxBuffered * BACKPRESSURE_SHARE) resolve()
            else setTimeout(check, 5)
          }
          setTimeout(check, 5)
        })
      },
      pause: () => socket.pause(),
      resume: () => socket.resume()
    }, { maxPendingFrames: options.maxPendingFrames })
    const timer = setTimeout(() => {
      if (!session.authenticated) close(1008, 'Authentication timeout')
    }, authTimeout)
    timer.unref()

    socket.on('pong', () => { state.alive = true })
    // Text frames, and binary ones read as UTF-8 (§1).
    // Size and depth are checked before anything parses or echoes the frame (one shared reader).
    socket.on('message', (data) => {
      try {
        if (closing) return
        const read = readFrame(data, { maxBytes: maxFrame })
        // The server's maxPayload usually holds this back; not when it allows the API's larger frames.
        if (read.kind === 'too-big') return close(FRAME_TOO_BIG.code, FRAME_TOO_BIG.reason)
        session.receive(read)
      } catch (error) {
        // A listener that threw would escape into the process: only this connection goes.
        hub.logger.error({ err: error }, 'plugin proxy frame failed')
        socket.terminate()
      }
    })
    socket.on('error', () => socket.terminate())
    socket.on('close', () => {
      closing = true
      clearTimeout(timer)
      sockets.delete(socket)
      session.closed().catch((error: unknown) => hub.logger.warn({ err: error }, 'plugin proxy close failed'))
    })
  })
}
