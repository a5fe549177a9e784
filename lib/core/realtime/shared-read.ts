/**
 * Shares one read between every waiter woken by the same event: the bus hands the same event
 * object to all its listeners, so the read is keyed by that object. A read is therefore always
 * started after the write it was rung for (a later event for the same row, e.g. a second
 * update of a command, gets a fresh read, never a stale one in flight).
 */
import type { MessageEvent } from './bus.js'

export interface SharedReader<V> {
  read(event: object, load: () => Promise<V>): Promise<V>
}

/**
 * @example
 * const reader = createSharedReader<Row | undefined>()
 * const row = await reader.read(event, () => store.notifications.findById(event.id))
 */
export function createSharedReader<V> (): SharedReader<V> {
  const reads = new WeakMap<object, Promise<V>>()
  return {
    read (event, load) {
      let promise = reads.get(event)
      if (promise === undefined) {
        promise = load()
        reads.set(event, promise)
      }
      return promise
    }
  }
}

/**
 * What a woken waiter reads for a message event: the record the event carries (bus.ts
 * `record`), else the row by id, one read shared by every waiter of that event.
 *
 * @example
 * const load = createEventLoader<NotificationRecord>((id) => store.notifications.findById(id))
 * const record = await load(event)
 */
export function createEventLoader<R> (
  findById: (id: number) => Promise<R | undefined>
): (event: MessageEvent) => Promise<R | undefined> {
  const reader = createSharedReader<R | undefined>()
  return (event) => event.record !== undefined
    ? Promise.resolve(event.record as R)
    : reader.read(event, () => findById(event.id))
}
