/**
 * The message records released lately, the newest per kind and device, for a short while: what
 * the log's per-device memory (newest-stamps.ts) hands a reader just behind its device's newest
 * message instead of a read. Bounded by age and by count, oldest first, since a record's
 * parameters may be as large as a request body: it holds about what the last seconds brought.
 */
import type { MessageKind } from './bus.js'
import type { CommandRecord, NotificationRecord } from './message-records.js'

type MessageRecord = NotificationRecord | CommandRecord

export interface RecentRecordsOptions {
  /** How long a record is held (default 2 s: a re-poll or a wait comes within a round trip). */
  maxAgeMs?: number
  /** Records held at most, every kind together (default 10,000). */
  maxRecords?: number
  /** Monotonic milliseconds (tests). */
  now?: () => number
}

export interface RecentRecords {
  /** Holds `record` as the newest of its device of `kind`, in place of the one before. */
  hold(kind: MessageKind, deviceId: string, record: MessageRecord): void
  /** The record held for the device of `kind`, if it is still young enough. */
  get(kind: MessageKind, deviceId: string): MessageRecord | undefined
  drop(kind: MessageKind, deviceId: string): void
  /** Drops every record of `kind`. */
  clear(kind: MessageKind): void
}

interface Held {
  readonly kind: MessageKind
  readonly deviceId: string
  readonly record: MessageRecord
  readonly at: number
}

/**
 * @example
 * const recent = createRecentRecords()
 * recent.hold('command', 'd1', record)
 * recent.get('command', 'd1') // record, for 2 s
 */
export function createRecentRecords (options: RecentRecordsOptions = {}): RecentRecords {
  const maxAgeMs = options.maxAgeMs ?? 2_000
  const maxRecords = options.maxRecords ?? 10_000
  const now = options.now ?? (() => performance.now())
  const byKind = new Map<MessageKind, Map<string, Held>>()
  let size = 0
  // In the order held, the oldest from `head` on (a Map iterated after deletions at its front walks
  // every deleted slot: see unanswered-commands.ts).
  let order: Array<Held | undefined> = []
  let head = 0

  const remove = (kind: MessageKind, deviceId: string): void => {
    if (byKind.get(kind)?.delete(deviceId) === true) size--
  }

  const evict = (time: number): void => {
    while (head < order.length) {
      const oldest = order[head]!
      if (size <= maxRecords && time - oldest.at <= maxAgeMs) break
      if (byKind.get(oldest.kind)?.get(oldest.deviceId) === oldest) remove(oldest.kind, oldest.deviceId)
      order[head++] = undefined
    }
    if (head > 1024 && head * 2 > order.length) {
      order = order.slice(head)
      head = 0
    }
  }

  return {
    hold (kind, deviceId, record) {
      let held = byKind.get(kind)
      if (held === undefined) byKind.set(kind, held = new Map())
      const time = now()
      const entry: Held = { kind, deviceId, record, at: time }
      if (!held.has(deviceId)) size++
      held.set(deviceId, entry)
      order.push(entry)
      evict(time)
    },
    get (kind, deviceId) {
      const entry = byKind.get(kind)?.get(deviceId)
      return entry === undefined || now() - entry.at > maxAgeMs ? undefined : entry.record
    },
    drop: remove,
    clear (kind) {
      size -= byKind.get(kind)?.size ?? 0
      byKind.delete(kind)
    }
  }
}
