/**
 * The commands this hub heard inserted and not yet updated (answered by their device), as its
 * bus released them. The wait for a command's result (`GET …/command/{id}/poll`, most often sent
 * just after the post) starts from it instead of reading the row: the lookup was one statement
 * in every command round trip (issue #26), on PostgreSQL the most frequent one.
 *
 * It hears the same bus as the router, before it, so between two events it knows exactly what
 * every stream has been handed: a wait that registers its stream and then finds its command here
 * misses no update (one released later reaches the stream; one released earlier took the command
 * out of here). It only ever says "still unanswered"; everything else is read from the store: an
 * answered command (its update is read as stored, never served from here), one not heard (written
 * before the start, not released yet, longer ago than `maxAgeMs`, or its event came without its
 * record). A `resync` (events may have been lost) empties it, and so does a dropped bus
 * connection, after which it stays deaf until the resync that follows the reconnection.
 *
 * A device deleted here (alone, or with its network or device type) empties it (`forget`): a new
 * device under the same id does not own the old one's commands. A deletion on another instance is
 * not heard; a wait there for such a command within `maxAgeMs` waits for an update that cannot
 * come (a command update checks the device as stored) and answers 204 at its timeout instead of
 * at once: latency, and nothing of the deleted device is shown.
 */
import type { BusEvent } from './bus.js'
import type { CommandRecord } from './message-records.js'

export interface UnansweredCommands {
  /** Hears one event of the hub's ordered bus (subscribed before the router). */
  hear(event: BusEvent): void
  /**
   * The insert stamp of command `id` if it was heard, for `deviceId`, within `maxAgeMs`, and no
   * update since; else undefined (read the store).
   */
  stampOf(id: number, deviceId: string): number | undefined
  /** Forgets every command (a device was deleted on this instance). */
  forget(): void
}

export interface UnansweredCommandsOptions {
  /** Commands remembered at most (default 10,000; the oldest go first). */
  maxEntries?: number
  /** How long a command is remembered (default 10 s): a wait comes right after its post. */
  maxAgeMs?: number
  /** Monotonic milliseconds (tests). */
  now?: () => number
}

interface Entry {
  readonly deviceId: string
  readonly stamp: number
  readonly heardAt: number
}

/**
 * @example
 * const unanswered = createUnansweredCommands()
 * bus.subscribe(unanswered.hear)
 * unanswered.stampOf(42, 'dev-1') // undefined: read the row
 */
export function createUnansweredCommands (options: UnansweredCommandsOptions = {}): UnansweredCommands {
  const maxEntries = options.maxEntries ?? 10_000
  const maxAgeMs = options.maxAgeMs ?? 10_000
  const now = options.now ?? (() => performance.now())
  // In the order heard: the oldest first.
  const entries = new Map<number, Entry>()
  let deaf = false

  const evict = (time: number): void => {
    for (const [id, entry] of entries) {
      if (entries.size <= maxEntries && time - entry.heardAt <= maxAgeMs) return
      entries.delete(id)
    }
  }

  return {
    hear (event) {
      if (event.kind === 'resync') {
        entries.clear()
        deaf = false
      } else if (event.kind === 'connection') {
        // Down: foreign events are lost until the resync that follows the reconnection.
        if (!event.up) {
          entries.clear()
          deaf = true
        }
      } else if (event.kind === 'command-update') {
        entries.delete(event.id)
      } else if (event.kind === 'command' && !deaf) {
        const record = event.record as CommandRecord | undefined
        if (record === undefined) return
        const time = now()
        entries.set(event.id, { deviceId: record.deviceId, stamp: record.stamp, heardAt: time })
        evict(time)
      }
    },
    stampOf (id, deviceId) {
      const entry = entries.get(id)
      if (entry === undefined || entry.deviceId !== deviceId || now() - entry.heardAt > maxAgeMs) return undefined
      return entry.stamp
    },
    forget () {
      entries.clear()
    }
  }
}
