/**
 * Where a reader stands in the message log: the one cursor type of every reader (REST
 * `timestamp`, SSE `Last-Event-ID`, WebSocket subscriptions, plugin `P6` cursors) and of the
 * log's mark.
 *
 * Every message (notification, command, command update) takes a stamp from one message clock,
 * unique and increasing in draw order; ids of each kind are drawn with their stamp. A reader
 * that has everything up to stamp `clock` resumes with `stamp > clock`; the ids let a reader
 * that resumes by id (plugin cursors of earlier versions) skip what it had, and let a stream tell
 * a live insert from one the mark already covered. The mark is a cursor too: everything at or
 * below it is committed, and everything later reaches the bus's listeners after it was read.
 */

export interface LogCursor {
  /** The message clock: the last stamp (insert stamp, or `lastUpdated` of an update). */
  readonly clock: number
  /** The last notification id. */
  readonly notification: number
  /** The last command id (inserts). */
  readonly command: number
}

/** Before every message. */
export const LOG_ORIGIN: LogCursor = Object.freeze({ clock: 0, notification: 0, command: 0 })

/**
 * The cursor of a reader that resumes from a server stamp (REST `timestamp`, SSE `Last-Event-ID`).
 *
 * @example
 * cursorAtClock(1763820000123) // { clock: 1763820000123, notification: 0, command: 0 }
 */
export function cursorAtClock (clock: number): LogCursor {
  return { clock, notification: 0, command: 0 }
}

/**
 * Each count of `a` or `b`, whichever is further (`a` itself when `b` is undefined).
 *
 * @example
 * furthest({ clock: 9, notification: 1, command: 5 }, { clock: 7, notification: 4, command: 2 })
 * // { clock: 9, notification: 4, command: 5 }
 */
export function furthest (a: LogCursor, b: LogCursor | undefined): LogCursor {
  if (b === undefined) return a
  return {
    clock: Math.max(a.clock, b.clock), notification: Math.max(a.notification, b.notification), command: Math.max(a.command, b.command)
  }
}

const CURSOR = /^(\d{1,16})\.(\d{1,16})\.(\d{1,16})$/

/**
 * The opaque cursor string of a position (plugins send it back to resume, P6).
 *
 * @example
 * encodeLogCursor({ notification: 12, command: 3, clock: 1763820000123 }) // '12.3.1763820000123'
 */
export function encodeLogCursor (cursor: LogCursor): string {
  return `${cursor.notification}.${cursor.command}.${cursor.clock}`
}

/**
 * The cursor a string names; undefined for anything that is not a cursor of this server.
 *
 * @example
 * decodeLogCursor('12.3.1763820000123') // { notification: 12, command: 3, clock: 1763820000123 }
 */
export function decodeLogCursor (text: unknown): LogCursor | undefined {
  if (typeof text !== 'string') return undefined
  const match = CURSOR.exec(text)
  if (match === null) return undefined
  const [notification, command, clock] = [match[1], match[2], match[3]].map(Number) as [number, number, number]
  if (![notification, command, clock].every(Number.isSafeInteger)) return undefined
  return { clock, notification, command }
}
