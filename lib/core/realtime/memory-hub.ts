/** The in-process hub: listeners in a set, events delivered synchronously. */
import type { Hub, HubListener } from './hub.js'

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
  return {
    get size () {
      return listeners.size
    },
    publish (event) {
      for (const listener of [...listeners]) listener(event)
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
