/**
 * A bounded memory of the latest keys seen: one MQTT client's overlapping topic filters deliver a
 * message once, and the copies of one message reach that client's streams together, so the last
 * few thousand keys are enough.
 */

export interface RecentKeys {
  /** True when `key` was seen lately; otherwise remembers it (forgetting the oldest past the cap). */
  seen(key: string): boolean
  clear(): void
}

/**
 * @example
 * const recent = createRecentKeys(2)
 * recent.seen('a') // false
 * recent.seen('a') // true
 */
export function createRecentKeys (max: number): RecentKeys {
  const keys = new Set<string>()
  return {
    seen (key) {
      if (keys.has(key)) return true
      keys.add(key)
      if (keys.size > max) {
        const oldest = keys.values().next().value
        if (oldest !== undefined) keys.delete(oldest)
      }
      return false
    },
    clear () {
      keys.clear()
    }
  }
}
