/**
 * The live notification feed of one device behind a small interface, so the transport can
 * change without touching the page. {@link openSseFeed} reads Server-Sent Events from
 * `/device/{id}/notification/stream` with fetch (EventSource cannot send an Authorization
 * header); after an error it reconnects with the last event id as `Last-Event-ID`, so no
 * notification is lost or repeated across reconnects.
 */
import type { Api, Notification } from './api.js'
import { errorText } from './api.js'

export type FeedState = { kind: 'live' } | { kind: 'reconnecting', message: string, retryInMs: number } | { kind: 'closed' }

export interface FeedHandlers {
  onItems(items: Notification[]): void
  onState(state: FeedState): void
}

export interface Feed {
  close(): void
}

/** Starts after `cursor` (the newest timestamp already shown; the server time when none). */
export type FeedFactory = (api: Api, deviceId: string, cursor: string, handlers: FeedHandlers) => Feed

const MAX_BACKOFF_MS = 10_000

/** Parses `text/event-stream` blocks; returns the events and the unfinished rest. */
export function parseEvents (buffer: string): { events: Array<{ id?: string, data: string }>, rest: string } {
  const events: Array<{ id?: string, data: string }> = []
  const blocks = buffer.replace(/\r\n?/g, '\n').split('\n\n')
  const rest = blocks.pop() ?? ''
  for (const block of blocks) {
    let id: string | undefined
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'id') id = value
      else if (field === 'data') data.push(value)
    }
    if (data.length > 0) events.push({ id, data: data.join('\n') })
  }
  return { events, rest }
}

/**
 * Reads the Server-Sent Events of `path` (whose query names the starting cursor) until closed;
 * after an error it reconnects with the last event id as `Last-Event-ID`, which the server
 * prefers to the query's cursor.
 *
 * @example
 * const feed = openEventStream<Notification>(api, '/device/notification/stream?timestamp=2026-11-22T14:00:00.000', { onItems, onState })
 */
export function openEventStream<T> (api: Api, path: string, handlers: { onItems(items: T[]): void, onState(state: FeedState): void }): Feed {
  let lastEventId: string | undefined
  let closed = false
  let backoff = 500
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined

  async function loop (): Promise<void> {
    while (!closed) {
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' }
        if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
        const res = await api.open(path, headers, controller.signal)
        if (res.body === null) throw new Error('The stream has no body.')
        handlers.onState({ kind: 'live' })
        backoff = 500
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
        let buffer = ''
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          const parsed = parseEvents(buffer + value)
          buffer = parsed.rest
          const items: T[] = []
          for (const event of parsed.events) {
            if (event.id !== undefined) lastEventId = event.id
            items.push(JSON.parse(event.data) as T)
          }
          if (items.length > 0) handlers.onItems(items)
        }
        throw new Error('The server closed the stream.')
      } catch (error) {
        if (closed) return
        handlers.onState({ kind: 'reconnecting', message: errorText(error), retryInMs: backoff })
        await new Promise<void>((resolve) => { timer = setTimeout(resolve, backoff) })
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2)
      }
    }
  }

  void loop()
  return {
    close () {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      controller.abort()
      handlers.onState({ kind: 'closed' })
    }
  }
}

/**
 * @example
 * const feed = openSseFeed(api, 'sensor-1', '2026-11-22T14:00:00.000', { onItems, onState })
 */
export const openSseFeed: FeedFactory = (api, deviceId, start, handlers) =>
  openEventStream<Notification>(api, `/device/${encodeURIComponent(deviceId)}/notification/stream?timestamp=${encodeURIComponent(start)}`, handlers)
