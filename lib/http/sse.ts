/**
 * Server-Sent Events over a core message stream: each event's `id` is the item's cursor (epoch
 * ms), so a browser `EventSource` that reconnects sends it back as `Last-Event-ID` and resumes
 * strictly after it. Writes respect backpressure (the stream waits for `drain`); a client that
 * reads nothing for `sendTimeoutMs` is cut off, so a stalled reader never grows the heap.
 */
import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { MessageStream } from '../core/realtime/message-stream.js'
import { StreamRevokedError } from '../core/realtime/message-stream.js'
import { badRequest } from '../core/errors.js'
import { parseTimestamp } from '../core/time.js'
import { jsonOf } from './websocket/frames.js'

export interface SseOptions {
  /** Comment line sent this often to keep proxies from closing an idle stream (default 30 s). */
  heartbeatMs?: number
  /** How long a write may wait for the client to read (default 10 s). */
  sendTimeoutMs?: number
}

/**
 * The resume cursor: `Last-Event-ID` wins over the `timestamp` query parameter; both mean
 * "strictly after". An unparseable value is 400.
 *
 * @example
 * resumeCursor(request, request.query.timestamp) // 1700000000123 or undefined
 */
export function resumeCursor (request: FastifyRequest, timestamp: string | undefined): number | undefined {
  const header = request.headers['last-event-id']
  const value = typeof header === 'string' && header.trim() !== '' ? header : timestamp
  const parsed = parseTimestamp(value)
  if (parsed === null) throw badRequest('Unparseable timestamp')
  return parsed
}

/**
 * Takes over the response and streams `stream` as `text/event-stream` until either side closes.
 *
 * @example
 * const stream = await hub.notifications.subscribe(request.principal, input)
 * sendEventStream(reply, stream)
 */
export function sendEventStream (reply: FastifyReply, stream: MessageStream<object>, options: SseOptions = {}): void {
  const heartbeatMs = options.heartbeatMs ?? 30_000
  const sendTimeoutMs = options.sendTimeoutMs ?? 10_000
  reply.hijack()
  const res = reply.raw
  // Headers set by hooks (CORS) go out with the hijacked response too.
  res.writeHead(200, {
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no'
  })
  res.write(': devicehub stream\n\n')

  let finished = false
  const finish = (): void => {
    if (finished) return
    finished = true
    clearInterval(heartbeat)
    stream.close()
    if (!res.writableEnded) res.end()
  }
  const heartbeat = setInterval(() => {
    if (!res.writableNeedDrain) res.write(': ping\n\n')
  }, heartbeatMs)
  heartbeat.unref()
  res.on('close', finish)
  stream.onClose(finish)

  const waitForDrain = (): Promise<void> => new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      res.off('drain', drained)
      // The client stopped reading: drop it rather than queue without bound.
      res.destroy()
      finish()
      resolve()
    }, sendTimeoutMs)
    const drained = (): void => {
      clearTimeout(timer)
      resolve()
    }
    res.once('drain', drained)
  })

  stream.start(({ cursor, item }) => {
    if (finished) return
    const written = res.write(`id: ${cursor}\ndata: ${jsonOf(item)}\n\n`)
    return written ? undefined : waitForDrain()
  }, (error) => {
    // Rights changed: end the response; the client's reconnect (Last-Event-ID) is authorised
    // again under the new rights and resumes with nothing lost.
    if (!(error instanceof StreamRevokedError)) reply.log.error({ err: error }, 'event stream failed')
    finish()
  })
}
