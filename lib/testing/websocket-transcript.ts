/**
 * WebSocket traffic in the rig's transcript, read off the rig's own `ws` server: each
 * connection's open and close, every frame a client sends (`from: 'client'`) and every frame the
 * server sends it (`from: 'server'`; pushes are written as `push` entries). The rig's WebSocket
 * clients (simulated devices with `transport: 'websocket'`) and any client under test are covered
 * alike, as every HTTP request is.
 *
 * Secrets are handled as in HTTP entries, where the URL's `token`/`password` parameters are
 * redacted and no header or body is written: a frame is written as its top-level fields, with
 * `token`, `accessToken`, `refreshToken` and `password` replaced by `[redacted]` and anything
 * shaped like a JWT in a string redacted too; nested bodies (parameters, results, users, lists)
 * are left out, except that a `command` or `notification` object is reduced to its id, device,
 * name, status and timestamp.
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { RawData, WebSocket, WebSocketServer } from 'ws'
import { redactUrl } from '../http/build-server.js'
import type { Transcript, TranscriptFrame } from './transcript.js'

export interface WebSocketTranscriptOptions {
  transcript: Transcript
  /** The device a token was minted for by the rig, if any (names the device of a connection). */
  deviceOfToken?: (token: string) => string | undefined
}

const SECRET_FIELD = /^(token|access_?token|refresh_?token|password)$/i
const JWT = /eyJ[\w-]*\.[\w-]+\.[\w-]*/g
const ITEM_FIELDS = ['id', 'deviceId', 'command', 'notification', 'status', 'timestamp']
const REDACTED = '[redacted]'

/**
 * Starts recording the WebSocket connections of `app` (before it listens). Install it before
 * the faults, so that a push the faults drop is not recorded as sent and a delayed one is
 * recorded when it leaves.
 *
 * @example
 * recordWebSockets(app, { transcript })
 */
export function recordWebSockets (app: FastifyInstance, options: WebSocketTranscriptOptions): void {
  const { transcript, deviceOfToken = () => undefined } = options
  const webSockets = (app as unknown as { websocketServer?: WebSocketServer }).websocketServer
  if (!transcript.enabled || webSockets === undefined) return
  let connections = 0
  webSockets.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const connection = ++connections
    const url = redactUrl(request.url ?? '')
    const tokenDevice = (token: unknown): string | undefined => typeof token === 'string' ? deviceOfToken(token) : undefined
    /** The device whose rig token authenticated this connection, if any. */
    let device = tokenDevice(/^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1])
    transcript.write({ type: 'connection', via: 'websocket', event: 'open', connection, url, device })

    socket.on('message', (data: RawData, isBinary: boolean) => {
      const parsed = isBinary ? undefined : parseObject(data.toString())
      if (parsed?.action === 'authenticate') device = tokenDevice(parsed.token) ?? device
      const frame = parsed === undefined ? unreadable(data, isBinary) : redactFrame(parsed)
      transcript.write({ type: 'frame', via: 'websocket', from: 'client', connection, device: deviceOf(parsed) ?? device, frame })
    })
    socket.once('close', (code: number) => {
      transcript.write({ type: 'connection', via: 'websocket', event: 'close', connection, code, device })
    })

    const send = socket.send.bind(socket) as (data: unknown, ...rest: unknown[]) => void
    socket.send = ((data: unknown, ...rest: unknown[]) => {
      const text = typeof data === 'string' ? data : Buffer.isBuffer(data) ? data.toString() : undefined
      const parsed = text === undefined ? undefined : parseObject(text)
      const frame = parsed === undefined ? unreadable(data, text === undefined) : redactFrame(parsed)
      const about = deviceOf(parsed) ?? device
      if (typeof parsed?.subscriptionId === 'number' && parsed.status === undefined) {
        transcript.write({ type: 'push', via: 'websocket', url, device: about, items: 1, connection, frame })
      } else {
        transcript.write({ type: 'frame', via: 'websocket', from: 'server', connection, device: about, frame })
      }
      send(data, ...rest)
    }) as WebSocket['send']
  })
}

/**
 * A frame's top-level fields with secrets redacted; nested bodies left out, a command or
 * notification reduced to what identifies it.
 *
 * @example
 * redactFrame({ action: 'authenticate', requestId: 1, token: 'eyJ...' })
 * // { action: 'authenticate', requestId: 1, token: '[redacted]' }
 */
export function redactFrame (frame: Record<string, unknown>): TranscriptFrame {
  const out: TranscriptFrame = {}
  for (const [key, value] of Object.entries(frame)) {
    if (SECRET_FIELD.test(key)) out[key] = REDACTED
    else if (value === null || typeof value !== 'object') out[key] = scalar(value)
    else if ((key === 'command' || key === 'notification') && !Array.isArray(value)) out[key] = identify(value as Record<string, unknown>)
  }
  return out
}

function identify (item: Record<string, unknown>): TranscriptFrame {
  const out: TranscriptFrame = {}
  for (const key of ITEM_FIELDS) {
    const value = item[key]
    if (value !== undefined && (value === null || typeof value !== 'object')) out[key] = scalar(value)
  }
  return out
}

function scalar (value: unknown): unknown {
  return typeof value === 'string' ? value.replace(JWT, REDACTED) : value
}

/** The device a frame is about: its `deviceId`, or that of the command or notification it carries. */
function deviceOf (frame: Record<string, unknown> | undefined): string | undefined {
  if (frame === undefined) return undefined
  if (typeof frame.deviceId === 'string') return frame.deviceId
  const item = frame.command ?? frame.notification
  const id = typeof item === 'object' && item !== null ? (item as { deviceId?: unknown }).deviceId : undefined
  return typeof id === 'string' ? id : undefined
}

/** A frame that is not a JSON object: its size only (its text may hold anything). */
function unreadable (data: unknown, binary: boolean): TranscriptFrame {
  const bytes = typeof data === 'string'
    ? Buffer.byteLength(data)
    : Buffer.isBuffer(data)
      ? data.length
      : Array.isArray(data)
        ? data.reduce((n: number, b: Buffer) => n + b.length, 0)
        : data instanceof ArrayBuffer ? data.byteLength : undefined
  return { unreadable: binary ? 'binary' : 'not a JSON object', bytes }
}

function parseObject (text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}
