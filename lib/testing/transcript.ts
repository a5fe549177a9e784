/**
 * The rig's transcript: one JSON line per request, push, WebSocket frame and fault, written as
 * they happen, so a failing CI run can be read afterwards. Tokens and passwords never appear:
 * URLs are redacted, headers and bodies are not written, and a WebSocket frame is written as its
 * envelope with secret fields redacted (see `./websocket-transcript.ts`).
 */
import { createWriteStream } from 'node:fs'
import type { WriteStream } from 'node:fs'

/** A WebSocket frame as the transcript shows it: its top-level fields, secrets redacted, bodies left out. */
export type TranscriptFrame = Record<string, unknown>

export type TranscriptEntry =
  | { type: 'request', method: string, url: string, status: number, ms: number, device?: string }
  | { type: 'push', via: 'long-poll', url: string, device?: string, items: number }
  | { type: 'push', via: 'websocket', url: string, device?: string, items: number, connection: number, frame: TranscriptFrame }
  | { type: 'frame', via: 'websocket', from: 'client' | 'server', connection: number, device?: string, frame: TranscriptFrame }
  | { type: 'connection', via: 'websocket', event: 'open', connection: number, url: string, device?: string }
  | { type: 'connection', via: 'websocket', event: 'close', connection: number, code: number, device?: string }
  | { type: 'fault', kind: string, device?: string, url?: string, detail?: string }

export interface Transcript {
  /** False when the rig writes no transcript (callers may skip the work of building entries). */
  readonly enabled: boolean
  /** Appends one line; ignored once the transcript is closed. */
  write(entry: TranscriptEntry): void
  close(): Promise<void>
}

/** A transcript to `path` (appended), or one that writes nowhere. */
export function createTranscript (path: string | undefined): Transcript {
  if (path === undefined) return { enabled: false, write () {}, close: async () => {} }
  const stream: WriteStream = createWriteStream(path, { flags: 'a' })
  let closed = false
  return {
    enabled: true,
    write (entry) {
      if (closed) return
      stream.write(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`)
    },
    close () {
      closed = true
      return new Promise((resolve) => stream.end(resolve))
    }
  }
}
