/**
 * The listener bookkeeping every doorbell needs: a set of listeners, each called with every
 * event, a throwing one never stopping the others.
 */
import type { DoorbellEvent, DoorbellListener } from './doorbell.js'

export interface ListenerSet {
  /** Adds a listener; returns the function that removes it (idempotent). */
  add(listener: DoorbellListener): () => void
  /** Calls every listener with `event` (the same object for all), in the order they were added. */
  deliver(event: DoorbellEvent): void
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
  const listeners = new Set<DoorbellListener>()
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
