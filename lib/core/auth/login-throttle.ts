/**
 * Login throttling (issues #16, #22): failed logins slow down further attempts from the same
 * client address, never for everyone. Two kinds of keys hold attempts back, each with an
 * exponential back-off once its free failures are used up:
 *
 * - a client address (IPv6: its /64), whatever login it tries: one address gets a few guesses,
 *   then about one a minute (one failure is forgotten per minute);
 * - a login from one address: that pair gets 5 guesses, then 1 s, 2 s, 4 s... up to 15 min.
 *
 * Nothing holds a login back for every address: an attacker who guesses a login's password from
 * elsewhere never delays its owner's right password. Failures for one login from many
 * addresses raise an alert instead ({@link GuessingWatch}). Nothing is stored; holds end by
 * themselves.
 */
import type { Clock } from '../time.js'
import { addressKey } from './client-address.js'
import type { GuessingAlert, GuessingWatch, GuessingWatchOptions } from './guessing-watch.js'
import { createGuessingWatch } from './guessing-watch.js'

export interface LoginThrottleOptions {
  clock: Clock
  /** Failures from one address, any login, before its back-off starts (default 10). */
  freePerAddress?: number
  /** One address's failures are forgotten one per this many ms (default 60 s). */
  addressLeakMs?: number
  /** Failures of one login from one address before that pair's back-off starts (default 5). */
  freePerLoginAndAddress?: number
  /** First hold in ms (default 1 s); each further failure doubles it. */
  baseDelayMs?: number
  /** Longest hold in ms (default 15 min); a key quiet for twice as long is forgotten. */
  maxDelayMs?: number
  /** Keys remembered at most (default 100,000; the least recently failed go first). */
  maxKeys?: number
  /** When failures for one login from many addresses raise an alert. */
  guessing?: Omit<GuessingWatchOptions, 'clock'>
}

export interface LoginThrottle {
  /**
   * Whether an attempt for this login from this address may go ahead: 0 = yes, and the attempt
   * counts as a failure at once (so parallel guesses cannot slip past the hold) until
   * {@link succeeded} takes it back; otherwise the milliseconds to wait.
   */
  attempt(login: string, address: string | undefined): number
  /** The attempt failed: returns the distributed-guessing alert this failure raised, if any. */
  failed(login: string, address: string | undefined): GuessingAlert | undefined
  /**
   * The attempt succeeded: its pair's record is cleared and its address's failure taken back
   * (the address's earlier failures stay: knowing one password must not reset them).
   */
  succeeded(login: string, address: string | undefined): void
  /** Logins under distributed guessing and alerts raised (for metrics). */
  readonly guessing: Pick<GuessingWatch, 'loginsUnderGuessing' | 'alerts'>
}

// Logins are at most 128 characters; a longer one cannot exist, and must not grow the keys.
const MAX_LOGIN_LENGTH = 256

interface Entry {
  failures: number
  until: number
  last: number
}

interface Key {
  key: string
  free: number
  /** Ms per forgotten failure; 0 = failures are only forgotten after a quiet spell. */
  leak: number
}

/**
 * @example
 * const throttle = createLoginThrottle({ clock: systemClock })
 * if (throttle.attempt('dhadmin', '10.0.0.1') > 0) throw tooManyAttempts(...)
 * // ...check the password, then throttle.failed(...) or throttle.succeeded(...)
 */
export function createLoginThrottle (options: LoginThrottleOptions): LoginThrottle {
  const { clock } = options
  const freePerAddress = options.freePerAddress ?? 10
  const addressLeak = options.addressLeakMs ?? 60_000
  const freePerPair = options.freePerLoginAndAddress ?? 5
  const base = options.baseDelayMs ?? 1000
  const max = options.maxDelayMs ?? 15 * 60_000
  const maxKeys = options.maxKeys ?? 100_000
  const entries = new Map<string, Entry>()
  const watch = createGuessingWatch({ clock, ...options.guessing })

  function keys (login: string, address: string | undefined): [Key, Key] {
    const where = addressKey(address)
    // JSON keeps the two parts apart whatever characters they hold.
    return [
      { key: `a:${where}`, free: freePerAddress, leak: addressLeak },
      { key: `p:${JSON.stringify([login.slice(0, MAX_LOGIN_LENGTH).toLowerCase(), where])}`, free: freePerPair, leak: 0 }
    ]
  }

  function live (key: string, now: number): Entry | undefined {
    const entry = entries.get(key)
    if (entry !== undefined && now - entry.last > 2 * max) {
      entries.delete(key)
      return undefined
    }
    return entry
  }

  function wait (list: Key[], now: number): number {
    let ms = 0
    for (const { key } of list) {
      const entry = live(key, now)
      if (entry !== undefined) ms = Math.max(ms, entry.until - now)
    }
    return ms
  }

  function count (list: Key[], now: number): void {
    for (const { key, free, leak } of list) {
      const entry = live(key, now) ?? { failures: 0, until: 0, last: now }
      if (leak > 0) entry.failures = Math.max(0, entry.failures - Math.floor((now - entry.last) / leak))
      entry.failures++
      entry.last = now
      // From the `free`-th failure on, each one holds the key back twice as long.
      const over = entry.failures - free
      entry.until = over >= 0 ? now + Math.min(max, base * 2 ** Math.min(over, 30)) : 0
      entries.delete(key)
      entries.set(key, entry)
      if (entries.size > maxKeys) entries.delete(entries.keys().next().value!)
    }
  }

  return {
    attempt (login, address) {
      const now = clock.now()
      const list = keys(login, address)
      const ms = wait(list, now)
      if (ms === 0) count(list, now)
      return ms
    },
    failed (login, address) {
      return watch.failed(login, addressKey(address))
    },
    succeeded (login, address) {
      const [byAddress, pair] = keys(login, address)
      entries.delete(pair.key)
      const entry = entries.get(byAddress.key)
      if (entry !== undefined) {
        entry.failures = Math.max(0, entry.failures - 1)
        // The attempt went ahead, so no hold was on before its own count set one.
        entry.until = Math.min(entry.until, clock.now())
      }
    },
    guessing: watch
  }
}
