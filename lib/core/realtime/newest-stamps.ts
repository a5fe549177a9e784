/**
 * Per kind and device, the newest stamp released (PostgreSQL's ordered bus) or written (the
 * message log on SQLite): a one-device reader whose cursor is at or past it has nothing to read
 * up to the mark (`MessageLog.newestFor`). Below the floor (a mark: the last resynchronisation's,
 * the first one taken, or where a memory that filled up started over) nothing is known per device.
 */
import type { MessageKind } from './bus.js'

/** Devices remembered per kind before the memory starts over from the mark. */
const MAX_DEVICES = 100_000

export interface NewestStamps {
  /** Notes `stamp` as the newest of `deviceId`; `mark` is where the memory starts over when full. */
  remember(kind: MessageKind, deviceId: string, stamp: number, mark: number): void
  newestFor(kind: MessageKind, deviceId: string): number
  /** Nothing at or below `mark` is known per device any more (after a resynchronisation). */
  forget(mark: number): void
}

/**
 * @example
 * const newest = createNewestStamps()
 * newest.remember('notification', 'd1', 12, 12)
 * newest.newestFor('notification', 'd1') // 12
 */
export function createNewestStamps (): NewestStamps {
  const newest = new Map<MessageKind, Map<string, number>>()
  let floor = 0
  return {
    remember (kind, deviceId, stamp, mark) {
      let devices = newest.get(kind)
      if (devices === undefined) newest.set(kind, devices = new Map())
      if (devices.size >= MAX_DEVICES && !devices.has(deviceId)) {
        devices.clear()
        floor = mark
      }
      devices.set(deviceId, stamp)
    },
    newestFor (kind, deviceId) {
      return Math.max(newest.get(kind)?.get(deviceId) ?? 0, floor)
    },
    forget (mark) {
      floor = mark
    }
  }
}
