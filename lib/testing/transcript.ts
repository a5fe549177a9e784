/**
 * The rig's transcript: one JSON line per request, push and fault, written as they happen, so
 * a failing CI run can be read afterwards. Tokens never appear (URLs are redacted, headers and
 * bodies are not written).
 */
import { createWriteStream } from 'node:fs'
import type { WriteStream } from 'node:fs'

export type TranscriptEntry =
  | { type: 'request', method: string, url: string, status: number, ms: number, device?: string }
  | { type: 'push', via: 'long-poll' | 'websocket', url: string, device?: string, items: number }
  | { type: 'fault', kind: string, device?: string, url?: string, detail?: string }

export interface Transcript {
  write(entry: TranscriptEntry): void
  close(): Promise<void>
}

/** A transcript to `path` (appended), or one that writes nowhere. */
export function createTranscript (path: string | undefined): Transcript {
  if (path === undefined) return { write () {}, close: async () => {} }
  const stream: WriteStream = createWriteStream(path, { flags: 'a' })
  return {
    write (entry) {
      stream.write(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`)
    },
    close: () => new Promise((resolve) => stream.end(resolve))
  }
}
