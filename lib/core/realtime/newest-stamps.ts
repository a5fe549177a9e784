/**
 * Per kind and device, the newest stamp released (PostgreSQL's ordered bus) or written (the
 * message log on SQLite): a one-device reader whose cursor is at or past it has nothing to read
 * up to the mark (`MessageLog.knownAfter`). Below the floor (a mark: the last resynchronisation's,
 * the first one taken, or where a memory that filled up started over) nothing is known per device.
 *
 * With each stamp it keeps the device's stamp before it and, for a short while, the record
 * itself (recent-records.ts): a reader whose cursor lies between the two has exactly that record to read, and is
 * answered from here instead of the store. Under load a device often re-polls just after its next
 * command was released (a client on another instance answered quickly), which cost a backlog read
 * per round trip before.
 */
import type { MessageKind } from './bus.js'
import type { CommandRecord, NotificationRecord } from './message-records.js'
import { messageStamp } from './message-records.js'
import type { RecentRecords } from './recent-records.js'
import { createRecentRecords } from './recent-records.js'

/** Devices remembered per kind before the memory starts over from the mark. */
const MAX_DEVICES = 100_000

type MessageRecord = NotificationRecord | CommandRecord

/** What `knownAfter` answers when nothing is known after the cursor (shared: it is never changed). */
export const NOTHING_AFTER: readonly MessageRecord[] = Object.freeze([])

/** A device's newest stamp, and the newest before it (or the floor then). */
interface Newest {
  stamp: number
  before: number
}

export interface NewestStamps {
  /**
   * Notes `stamp` as the newest of `deviceId`, with its `record` when it has committed (undefined:
   * not known, or not yet committed); `mark` is where the memory starts over when full.
   */
  remember(kind: MessageKind, deviceId: string, stamp: number, mark: number, record: MessageRecord | undefined): void
  /**
   * What of `deviceId` of `kind` is stamped after `after`, as far as the memory knows: nothing
   * (`[]`, the cursor is at or past the newest), the newest alone (nothing of the device lies
   * between `after` and it), or undefined when it does not know (read the store).
   */
  knownAfter(kind: MessageKind, deviceId: string, after: number): readonly MessageRecord[] | undefined
  /** Nothing at or below `mark` is known per device any more (after a resynchronisation). */
  forget(mark: number): void
}

/**
 * @example
 * const newest = createNewestStamps()
 * newest.remember('notification', 'd1', 12, 12, record)
 * newest.knownAfter('notification', 'd1', 12) // [] (nothing after 12)
 * newest.knownAfter('notification', 'd1', 0) // [record] (the floor is 0, nothing came before it)
 */
export function createNewestStamps (records: RecentRecords = createRecentRecords()): NewestStamps {
  const newest = new Map<MessageKind, Map<string, Newest>>()
  let floor = 0
  const newestFor = (kind: MessageKind, deviceId: string): number =>
    Math.max(newest.get(kind)?.get(deviceId)?.stamp ?? 0, floor)

  const keep = (kind: MessageKind, deviceId: string, record: MessageRecord | undefined): void => {
    if (record === undefined) records.drop(kind, deviceId)
    else records.hold(kind, deviceId, record)
    // An update changes its command's row: the command as inserted is no longer what a read finds.
    if (kind === 'command-update') {
      const command = records.get('command', deviceId)
      if (command !== undefined && (record === undefined || command.id === record.id)) records.drop('command', deviceId)
    }
  }

  return {
    remember (kind, deviceId, stamp, mark, record) {
      let devices = newest.get(kind)
      if (devices === undefined) newest.set(kind, devices = new Map())
      if (devices.size >= MAX_DEVICES && !devices.has(deviceId)) {
        devices.clear()
        records.clear(kind)
        floor = mark
      }
      devices.set(deviceId, { stamp, before: newestFor(kind, deviceId) })
      keep(kind, deviceId, record)
    },
    knownAfter (kind, deviceId, after) {
      if (newestFor(kind, deviceId) <= after) return NOTHING_AFTER
      const entry = newest.get(kind)?.get(deviceId)
      if (entry === undefined || entry.stamp <= floor || entry.before > after) return undefined
      const record = records.get(kind, deviceId)
      if (record === undefined) return undefined
      return messageStamp(kind, record) === entry.stamp ? [record] : undefined
    },
    forget (mark) {
      floor = mark
    }
  }
}
