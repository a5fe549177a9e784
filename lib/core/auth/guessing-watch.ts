/**
 * Distributed guessing (issue #22): failures for one login from many client addresses. Holding
 * such a login back would let anyone lock its owner out, so nothing is refused here: the watch
 * only raises an alert, at most once per login and window, for the metrics and the log.
 */
import type { Clock } from '../time.js'

export interface GuessingWatchOptions {
  clock: Clock
  /** Distinct client addresses (IPv6: /64s) failing one login within a window that raise an alert (default 10). */
  addresses?: number
  /** The window, in ms (default 15 min); it starts at a login's first failure. */
  windowMs?: number
  /** Logins watched at most (default 10,000; the least recently failed go first). */
  maxLogins?: number
}

/** What the log line and the metrics report; never a password. */
export interface GuessingAlert {
  /** The login as the client typed it (trimmed, at most 256 characters). */
  login: string
  /** Distinct addresses that failed it in this window (the threshold when the alert is raised). */
  addresses: number
  /** Failures for it in this window so far. */
  failures: number
  windowMs: number
}

export interface GuessingWatch {
  /** Counts a failure of `login` from `addressKey`; returns the alert when this one raised it. */
  failed(login: string, addressKey: string): GuessingAlert | undefined
  /** Logins with an alert within the last window. */
  readonly loginsUnderGuessing: number
  /** Alerts raised since start. */
  readonly alerts: number
}

interface Watched {
  start: number
  failures: number
  addresses: Set<string>
  alerted: boolean
}

// Logins are at most 128 characters; a longer one cannot exist, and must not grow the memory or the log.
const MAX_LOGIN_LENGTH = 256

/**
 * @example
 * const watch = createGuessingWatch({ clock: systemClock })
 * const alert = watch.failed('dhadmin', '203.0.113.9')
 * if (alert !== undefined) logger.warn(alert, 'distributed login guessing')
 */
export function createGuessingWatch (options: GuessingWatchOptions): GuessingWatch {
  const { clock } = options
  const threshold = Math.max(2, options.addresses ?? 10)
  const windowMs = options.windowMs ?? 15 * 60_000
  const maxLogins = options.maxLogins ?? 10_000
  const watched = new Map<string, Watched>()
  // Login -> end of its alert's window: the gauge.
  const flagged = new Map<string, number>()
  let alerts = 0

  function purgeFlagged (now: number): void {
    for (const [login, until] of flagged) if (until <= now) flagged.delete(login)
  }

  return {
    failed (login, addressKey) {
      const now = clock.now()
      const name = login.slice(0, MAX_LOGIN_LENGTH)
      const key = name.toLowerCase()
      let entry = watched.get(key)
      if (entry === undefined || now - entry.start > windowMs) entry = { start: now, failures: 0, addresses: new Set(), alerted: false }
      entry.failures++
      // The set stops growing at the threshold: memory stays bounded whatever the attacker holds.
      if (!entry.alerted) entry.addresses.add(addressKey)
      watched.delete(key)
      watched.set(key, entry)
      if (watched.size > maxLogins) watched.delete(watched.keys().next().value!)
      if (entry.alerted || entry.addresses.size < threshold) return undefined
      entry.alerted = true
      alerts++
      flagged.delete(key)
      flagged.set(key, entry.start + windowMs)
      if (flagged.size > maxLogins) flagged.delete(flagged.keys().next().value!)
      const alert = { login: name, addresses: entry.addresses.size, failures: entry.failures, windowMs }
      entry.addresses.clear()
      return alert
    },
    get loginsUnderGuessing () {
      purgeFlagged(clock.now())
      return flagged.size
    },
    get alerts () {
      return alerts
    }
  }
}
