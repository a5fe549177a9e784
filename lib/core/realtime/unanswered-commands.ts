/**
 * The commands this hub heard inserted lately, and whether an update (their device's answer) was
 * heard since, as its bus released them. The wait for a command's result (`GET …/command/{id}/poll`,
 * most often sent just after the post) starts from it instead of reading the row: the lookup was
 * one statement in every command round trip (issue #26), on PostgreSQL the most frequent one.
 *
 * It hears the same bus as the router, before it, so between two events it knows exactly what
 * every stream has been handed: a wait that registers its stream and then finds its command here
 * unanswered misses no update (one released later reaches the stream; one released earlier marked
 * it answered). An answered command's update is taken from the log's memory of the device's
 * newest update (`MessageLog.knownAfter`) when that memory holds it, else read from the store, as
 * is a command not heard (written before the start, not released yet, longer ago than `maxAgeMs`,
 * or its event came without its record). A `resync` (events may have been lost) empties it, and so
 * does a dropped bus connection, after which it stays deaf until the resync that follows the
 * reconnection.
 *
 * A device deleted here (alone, or with its network or device type) empties it (`forget`): a new
 * device under the same id does not own the old one's commands. A deletion on another instance is
 * not heard; a wait there for such a command within `maxAgeMs` waits for an update that cannot
 * come (a command update checks the device as stored) and answers 204 at its timeout instead of
 * at once; an answer taken from memory must match the device's network and type as stored.
 */
import type { BusEvent } from './bus.js'
import type { CommandRecord } from './message-records.js'

export interface UnansweredCommands {
  /** Hears one event of the hub's ordered bus (subscribed before the router). */
  hear(event: BusEvent): void
  /**
   * Command `id` if it was heard, for `deviceId`, within `maxAgeMs`: its insert stamp, and whether
   * an update was heard since; else undefined (read the store).
   */
  heard(id: number, deviceId: string): HeardCommand | undefined
  /** Forgets every command (a device was deleted on this instance). */
  forget(): void
}

/** A command as heard: the insert's stamp (a wait's cursor) and whether it was answered since. */
export interface HeardCommand {
  readonly stamp: number
  readonly answered: boolean
}

export interface UnansweredCommandsOptions {
  /** Commands remembered at most (default 10,000; the oldest go first). */
  maxEntries?: number
  /** How long a command is remembered (default 10 s): a wait comes right after its post. */
  maxAgeMs?: number
  /** Monotonic milliseconds (tests). */
  now?: () => number
}

interface Entry extends HeardCommand {
  readonly id: number
  readonly deviceId: string
  readonly heardAt: number
  answered: boolean
}

/**
 * @example
 * const unanswered = createUnansweredCommands()
 * bus.subscribe(unanswered.hear)
 * unanswered.heard(42, 'dev-1') // undefined: read the row
 */
export function createUnansweredCommands (options: UnansweredCommandsOptions = {}): UnansweredCommands {
  const maxEntries = options.maxEntries ?? 10_000
  const maxAgeMs = options.maxAgeMs ?? 10_000
  const now = options.now ?? (() => performance.now())
  const entries = new Map<number, Entry>()
  // In the order heard, the oldest from `head` on. Not the map's own order: a map iterated from its
  // start after deletions at the front walks every deleted slot, ~10 µs per command at 10,000.
  let heardOrder: Array<Entry | undefined> = []
  let head = 0
  let deaf = false

  const clear = (): void => {
    entries.clear()
    heardOrder = []
    head = 0
  }

  const evict = (time: number): void => {
    while (head < heardOrder.length) {
      const oldest = heardOrder[head]!
      if (entries.size <= maxEntries && time - oldest.heardAt <= maxAgeMs) break
      if (entries.get(oldest.id) === oldest) entries.delete(oldest.id)
      heardOrder[head++] = undefined
    }
    if (head > 1024 && head * 2 > heardOrder.length) {
      heardOrder = heardOrder.slice(head)
      head = 0
    }
  }

  return {
    hear (event) {
      if (event.kind === 'resync') {
        clear()
        deaf = false
      } else if (event.kind === 'connection') {
        // Down: foreign events are lost until the resync that follows the reconnection.
        if (!event.up) {
          clear()
          deaf = true
        }
      } else if (event.kind === 'command-update') {
        const entry = entries.get(event.id)
        if (entry !== undefined) entry.answered = true
      } else if (event.kind === 'command' && !deaf) {
        const record = event.record as CommandRecord | undefined
        if (record === undefined) return
        const time = now()
        const entry: Entry = { id: event.id, deviceId: record.deviceId, stamp: record.stamp, heardAt: time, answered: false }
        entries.set(event.id, entry)
        heardOrder.push(entry)
        evict(time)
      }
    },
    heard (id, deviceId) {
      const entry = entries.get(id)
      if (entry === undefined || entry.deviceId !== deviceId || now() - entry.heardAt > maxAgeMs) return undefined
      return entry
    },
    forget () {
      clear()
    }
  }
}
