/**
 * Counters an operator reads (the HTTP adapter turns them into Prometheus metrics). Plain numbers
 * in the core, so the core stays free of any metrics library; counting costs one increment.
 */
import type { LoginStats } from '../auth/auth-service.js'
import type { MessageKind } from '../realtime/bus.js'

export interface HubStats {
  /** Long polls parked on this instance right now. */
  readonly parkedPolls: number
  /** Commands, command updates and notifications committed through this instance since it started. */
  readonly messagesWritten: Readonly<Record<MessageKind, number>>
  /** Rows deleted by the retention pruner (R8) since start, and its completed passes. */
  readonly retention: { readonly prunedRows: number, readonly passes: number, readonly failures: number }
  /**
   * The ordered bus (PostgreSQL with its ordering; zeros elsewhere): events waiting for an
   * earlier stamp now, and resynchronisations since start (a write that failed after drawing its
   * stamp, a LISTEN reconnect). A `waiting` that stays up means a writer is stuck mid-transaction.
   */
  readonly doorbellOrder: { readonly waiting: number, readonly resyncs: number }
  /** Refused logins by reason, and distributed guessing (many addresses failing one login). */
  readonly logins: LoginStats
}

const NO_ORDER = { waiting: 0, resyncs: 0 }
const NO_LOGINS: LoginStats = { failures: { invalid: 0, throttled: 0, inactive: 0 }, guessingAlerts: 0, loginsUnderGuessing: 0 }

/** The mutable side of {@link HubStats}, owned by createDeviceHub(). */
export interface StatsRecorder {
  readonly stats: HubStats
  /**
   * Counts one committed message write of this instance (the message log calls it; other instances' writes reach it
   * only through the bus).
   */
  written(kind: MessageKind): void
  pruned(rows: number): void
  pruneFailed(): void
}

export function createStatsRecorder (
  parkedPolls: () => number,
  order: () => HubStats['doorbellOrder'] = () => NO_ORDER,
  logins: LoginStats = NO_LOGINS
): StatsRecorder {
  const messagesWritten: Record<MessageKind, number> = { command: 0, 'command-update': 0, notification: 0 }
  const retention = { prunedRows: 0, passes: 0, failures: 0 }
  return {
    stats: {
      get parkedPolls () {
        return parkedPolls()
      },
      messagesWritten,
      retention,
      get doorbellOrder () {
        return order()
      },
      logins
    },
    written (kind) {
      messagesWritten[kind]++
    },
    pruned (rows) {
      retention.prunedRows += rows
      retention.passes++
    },
    pruneFailed () {
      retention.failures++
    }
  }
}
