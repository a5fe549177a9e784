/**
 * The in-process bus (`createMemoryDoorbell`, a name kept for the public API): listeners in a set,
 * events delivered after the write commits.
 */
import type { Bus, BusEvent } from './bus.js'
import { createListenerSet } from './listener-set.js'

export interface MemoryDoorbell extends Bus {
  /** Number of registered listeners (tests check nothing leaks). */
  readonly size: number
}

/**
 * @example
 * const bus = createMemoryDoorbell()
 * const off = bus.subscribe((event) => console.log(event.kind))
 * off()
 */
export function createMemoryDoorbell (options: { onListenerError?: (error: unknown) => void } = {}): MemoryDoorbell {
  const listeners = createListenerSet(options.onListenerError)
  let closed = false
  const deliver = (event: BusEvent): void => {
    if (!closed) listeners.deliver(event)
  }
  return {
    get size () {
      return listeners.size
    },
    async publish (event, tx) {
      if (tx === undefined) deliver(event)
      else tx.afterCommit(() => deliver(event))
    },
    subscribe (listener) {
      return listeners.add(listener)
    },
    async close () {
      closed = true
      listeners.clear()
    }
  }
}
