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
export function createMemoryHub (): MemoryHub {
  const listeners = new Set<HubListener>()
  const deliver = (event: HubEvent): void => {
    for (const listener of [...listeners]) listener(event)
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
      listeners.clear()
    }
  }
}
