/**
 * Reading one inbound message frame, for every endpoint that takes JSON messages over a
 * connection (the WebSocket API, the plugin proxy, and any added later): the same bounds as
 * HTTP bodies, checked before anything parses or echoes the frame. Size first, then nesting
 * depth on the raw text (JSON.parse itself recurses and can overflow the stack on extreme
 * nesting), then the parse. Nothing here recurses, so no frame can overflow the stack.
 */
import { JSON_TOO_DEEP, MAX_JSON_DEPTH, jsonTooDeep } from '../core/validation.js'

/** What a connection hands over: text, or the bytes of a frame (read as UTF-8). */
export type FrameData = string | Buffer | ArrayBuffer | Buffer[]

export interface FrameLimits {
  /** Largest frame in bytes; a larger one is `too-big` (callers close with 1009). */
  maxBytes: number
  /** Deepest nesting of objects and arrays (default {@link MAX_JSON_DEPTH}, as HTTP bodies). */
  maxDepth?: number
}

/** The outcome: a parsed value, or why there is none (with a message fit for the client). */
export type InboundFrame =
  | { kind: 'json', value: unknown, bytes: number }
  | { kind: 'too-big', bytes: number }
  | { kind: 'too-deep', message: string, bytes: number }
  | { kind: 'malformed', message: string, bytes: number }

export const FRAME_TOO_BIG = { code: 1009, reason: 'Message too big' } as const

function textOf (data: FrameData): { text: string, bytes: number } {
  if (typeof data === 'string') return { text: data, bytes: Buffer.byteLength(data) }
  const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(new Uint8Array(data))
  return { text: buffer.toString('utf8'), bytes: buffer.length }
}

/**
 * Reads one frame within `limits`.
 *
 * @example
 * readFrame('{"action":"server/info"}', { maxBytes: 1024 }) // { kind: 'json', value: { action: 'server/info' }, bytes: 24 }
 * readFrame('[[[[1]]]]', { maxBytes: 1024, maxDepth: 2 }).kind // 'too-deep'
 */
export function readFrame (data: FrameData, limits: FrameLimits): InboundFrame {
  // A Buffer is measured before it is decoded: an oversized one is never turned into text.
  if (typeof data !== 'string') {
    const size = Array.isArray(data) ? data.reduce((sum, part) => sum + part.length, 0) : data.byteLength
    if (size > limits.maxBytes) return { kind: 'too-big', bytes: size }
  }
  const { text, bytes } = textOf(data)
  if (bytes > limits.maxBytes) return { kind: 'too-big', bytes }
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH
  if (jsonTooDeep(text, maxDepth)) {
    const message = maxDepth === MAX_JSON_DEPTH ? JSON_TOO_DEEP : `JSON value is nested too deeply: at most ${maxDepth} levels`
    return { kind: 'too-deep', message, bytes }
  }
  try {
    return { kind: 'json', value: JSON.parse(text), bytes }
  } catch (error) {
    return { kind: 'malformed', message: error instanceof Error ? error.message : 'Malformed JSON', bytes }
  }
}

/**
 * A correlation id as it may be echoed: a string or a finite number, else null. Anything else
 * (an object, an array, however nested) is dropped rather than serialised back to the client.
 *
 * @example
 * echoableId('r7') // 'r7'
 * echoableId([[1]]) // null
 */
export function echoableId (value: unknown): string | number | null {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return value
  return null
}
