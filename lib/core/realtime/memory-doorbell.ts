/** The in-process doorbell: listeners in a set, events delivered after the write commits. */
import type { Doorbell, DoorbellEvent, DoorbellListener } from './doorbell.js'

export interface MemoryDoorbell extends Doorbell {
  /** Number of registered listeners (tests check nothing leaks). */
  readonly size: number
}

/**
 * @example
 * const doorbell = createMemoryDoorbell()
 * const off = doorbell.subscribe((event) => console.log(event.id))
 * off()
 */
export function createMemoryDoorbell (options: { onListenerError?: (error: unknown) => void } = {}): MemoryDoorbell {
  const listeners = new Set<DoorbellListener>()
  let closed = false
  const deliver = (event: DoorbellEvent): void => {
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
