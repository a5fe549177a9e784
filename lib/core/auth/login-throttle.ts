/**
 * Login throttling (issue #16): failed `POST /token` attempts slow down further attempts per
 * login and per client address with an exponential back-off, instead of locking the account
 * for good. While a key is held back every attempt is refused, the right password too, so
 * guessing stays slow; nothing is stored and the hold ends by itself.
 */
import type { Clock } from '../time.js'

export interface LoginThrottleOptions {
  clock: Clock
  /** Failures per login before the back-off starts (default 5). */
  freePerLogin?: number
  /** Failures per client address before the back-off starts (default 20: addresses are shared). */
  freePerAddress?: number
  /** First hold in ms (default 1 s); each further failure doubles it. */
  baseDelayMs?: number
  /** Longest hold in ms (default 15 min). */
  maxDelayMs?: number
  /** Keys remembered at most (default 100,000; the oldest go first). */
  maxKeys?: number
}

export interface LoginThrottle {
  /** Milliseconds until an attempt for this login from this address is allowed (0 = now). */
  retryAfter(login: string, address: string | undefined): number
  /** Records a failed attempt. */
  failed(login: string, address: string | undefined): void
  /** A successful login clears the login's record (not the address's). */
  succeeded(login: string): void
}

interface Entry {
  failures: number
  until: number
  last: number
}

/**
 * @example
 * const throttle = createLoginThrottle({ clock: systemClock })
 * if (throttle.retryAfter('dhadmin', '10.0.0.1') > 0) throw tooManyAttempts(...)
 */
export function createLoginThrottle (options: LoginThrottleOptions): LoginThrottle {
  const { clock } = options
  const freePerLogin = options.freePerLogin ?? 5
  const freePerAddress = options.freePerAddress ?? 20
  const base = options.baseDelayMs ?? 1000
  const max = options.maxDelayMs ?? 15 * 60_000
  const maxKeys = options.maxKeys ?? 100_000
  const entries = new Map<string, Entry>()

  function keys (login: string, address: string | undefined): Array<[string, number]> {
    const list: Array<[string, number]> = [[`l:${login.toLowerCase()}`, freePerLogin]]
    if (address !== undefined && address !== '') list.push([`a:${address}`, freePerAddress])
    return list
  }

  function live (key: string, now: number): Entry | undefined {
    const entry = entries.get(key)
    // A key quiet for twice the longest hold starts over.
    if (entry !== undefined && now - entry.last > 2 * max) {
      entries.delete(key)
      return undefined
    }
    return entry
  }

  return {
    retryAfter (login, address) {
      const now = clock.now()
      let wait = 0
      for (const [key] of keys(login, address)) {
        const entry = live(key, now)
        if (entry !== undefined) wait = Math.max(wait, entry.until - now)
      }
      return wait
    },
    failed (login, address) {
      const now = clock.now()
      for (const [key, free] of keys(login, address)) {
        const entry = live(key, now) ?? { failures: 0, until: 0, last: now }
        entry.failures++
        entry.last = now
        // From the `free`-th failure on, each one holds the key back twice as long.
        const over = entry.failures - free
        if (over >= 0) entry.until = now + Math.min(max, base * 2 ** Math.min(over, 30))
        entries.delete(key)
        entries.set(key, entry)
        if (entries.size > maxKeys) entries.delete(entries.keys().next().value!)
      }
    },
    succeeded (login) {
      entries.delete(`l:${login.toLowerCase()}`)
    }
  }
}
