/**
 * The listener bookkeeping every bus needs: a set of listeners, each called with every
 * event, a throwing one never stopping the others.
 */
import type { BusEvent, BusListener } from './bus.js'

export interface ListenerSet {
  /** Adds a listener; returns the function that removes it (idempotent). */
  add(listener: BusListener): () => void
  /** Calls every listener with `event` (the same object for all), in the order they were added. */
  deliver(event: BusEvent): void
  clear(): void
  readonly size: number
}

/**
 * @example
 * const listeners = createListenerSet((error) => logger.error({ err: error }, 'doorbell listener failed'))
 * const off = listeners.add((event) => wake(event))
 * listeners.deliver(event)
 */
export function createListenerSet (onListenerError?: (error: unknown) => void): ListenerSet {
  const listeners = new Set<BusListener>()
  return {
    get size () {
      return listeners.size
    },
    add (listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    deliver (event) {
      // A copy: listeners unsubscribe themselves while being called.
      for (const listener of [...listeners]) {
        try {
          listener(event)
        } catch (error) {
          onListenerError?.(error)
        }
      }
    },
    clear () {
      listeners.clear()
    }
  }
}
