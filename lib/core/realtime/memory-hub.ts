/** The in-process hub: listeners in a set, events delivered after the write commits. */
import type { Hub, HubEvent, HubListener } from './hub.js'

export interface MemoryHub extends Hub {
  /** Number of registered listeners (tests check nothing leaks). */
  readonly size: number
}

/**
 * @example
 * const hub = createMemoryHub()
 * const off = hub.subscribe((event) => console.log(event.id))
 * off()
 */
export function createMemoryHub (options: { onListenerError?: (error: unknown) => void } = {}): MemoryHub {
  const listeners = new Set<HubListener>()
  let closed = false
  const deliver = (event: HubEvent): void => {
    if (closed) return
    // A copy: listeners unsubscribe themselves while being called.
    for (const listener of [...listeners]) {
      try {
        listener(event)
      } catch (error) {
        options.onListenerError?.(error)
      }
    }
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
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    async close () {
      closed = true
      listeners.clear()
    }
  }
}
