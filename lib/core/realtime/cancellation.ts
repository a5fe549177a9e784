/**
 * What ends a long poll early. `Cancellation` is the part of AbortSignal a waiter uses, so an
 * AbortSignal works as is, and an adapter can offer a lighter object (thousands of parked
 * polls each hold one). `WaiterRegistry` releases every pending poll at shutdown with one Set
 * entry per waiter instead of one EventTarget listener each.
 */

export interface Cancellation {
  readonly aborted: boolean
  addEventListener(type: 'abort', listener: () => void): void
  removeEventListener(type: 'abort', listener: () => void): void
}

export interface WaiterRegistry {
  /** True once shutdown began: new polls answer at once. */
  readonly closed: boolean
  /** Registers a release function. */
  add(release: () => void): void
  /** Removes a release function (a waiter that finished). */
  remove(release: () => void): void
  /** Calls every release function (idempotent) and refuses new waits. */
  releaseAll(): void
  /** Waiters registered now (tests). */
  readonly size: number
}

/**
 * @example
 * const waiters = createWaiterRegistry()
 * waiters.add(release)
 * waiters.remove(release)
 */
export function createWaiterRegistry (): WaiterRegistry {
  const releases = new Set<() => void>()
  let closed = false
  return {
    get closed () {
      return closed
    },
    get size () {
      return releases.size
    },
    add (release) {
      releases.add(release)
    },
    remove (release) {
      releases.delete(release)
    },
    releaseAll () {
      closed = true
      for (const release of [...releases]) release()
      releases.clear()
    }
  }
}
