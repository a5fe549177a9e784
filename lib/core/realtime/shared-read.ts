/**
 * Coalesces identical reads in flight: every waiter woken by the same doorbell asks for the
 * same row, and they all share one store read instead of each doing its own.
 */

export interface SharedReader<V> {
  read(key: string, load: () => Promise<V>): Promise<V>
  /** Reads in flight (tests). */
  readonly pending: number
}

/**
 * @example
 * const reader = createSharedReader<Row | undefined>()
 * const row = await reader.read(`notification:${id}`, () => store.notifications.findById(id))
 */
export function createSharedReader<V> (): SharedReader<V> {
  const inFlight = new Map<string, Promise<V>>()
  return {
    get pending () {
      return inFlight.size
    },
    read (key, load) {
      const existing = inFlight.get(key)
      if (existing !== undefined) return existing
      const promise = load().finally(() => inFlight.delete(key))
      inFlight.set(key, promise)
      return promise
    }
  }
}
