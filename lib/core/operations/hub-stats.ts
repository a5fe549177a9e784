/**
 * Counters an operator reads (the HTTP adapter turns them into Prometheus metrics). Plain numbers
 * in the core, so the core stays free of any metrics library; counting costs one increment.
 */
import type { LoginStats } from '../auth/auth-service.js'
import type { Store } from '../ports.js'
import { shareDispatcher } from '../realtime/dispatcher.js'
import type { Doorbell, DoorbellEvent, DoorbellEventKind } from '../realtime/doorbell.js'

export type MessageKind = Exclude<DoorbellEventKind, 'resync' | 'revoke' | 'plugin'>

export interface HubStats {
  /** Long polls parked on this instance right now. */
  readonly parkedPolls: number
  /** Commands, command updates and notifications committed through this instance since it started. */
  readonly messagesWritten: Readonly<Record<MessageKind, number>>
  /** Rows deleted by the retention pruner (R8) since start, and its completed passes. */
  readonly retention: { readonly prunedRows: number, readonly passes: number, readonly failures: number }
  /**
   * The ordering doorbell (PostgreSQL with its doorbell; zeros elsewhere): events waiting for an
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
  /** The counts behind `stats.messagesWritten`, for countingDoorbell(). */
  readonly messageCounts: Record<MessageKind, number>
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
    messageCounts: messagesWritten,
    pruned (rows) {
      retention.prunedRows += rows
      retention.passes++
    },
    pruneFailed () {
      retention.failures++
    }
  }
}

/**
 * Every write that wakes pollers rings the doorbell inside its transaction, so counting the
 * rings this instance makes (once the transaction commits) counts the messages it wrote, and
 * never those of other instances that reach it through a shared doorbell.
 *
 * @example
 * const doorbell = countingDoorbell(createMemoryDoorbell(), recorder.stats.messagesWritten)
 */
export function countingDoorbell (inner: Doorbell, counts: Record<MessageKind, number>): Doorbell {
  // Only message writes count; `resync`, `revoke` (rights shrank) and `plugin` (a plugin's
  // status or filter changed) carry no message.
  const count = (event: DoorbellEvent): void => {
    if (event.kind !== 'resync' && event.kind !== 'revoke' && event.kind !== 'plugin') counts[event.kind]++
  }
  const counting: Doorbell = {
    publish (event, tx?: Store) {
      if (tx === undefined) count(event)
      else tx.afterCommit(() => count(event))
      return inner.publish(event, tx)
    },
    subscribe: (listener) => inner.subscribe(listener),
    close: () => inner.close()
  }
  // Forwarded only when the inner doorbell has it: its presence is what makes writers ring
  // from the write statement (one round trip on PostgreSQL).
  if (inner.storeChannel !== undefined) {
    counting.storeChannel = (store) => inner.storeChannel!(store)
    counting.storeRang = (event) => {
      count(event)
      inner.storeRang?.(event)
    }
  }
  if (inner.mark !== undefined) counting.mark = () => inner.mark!()
  if (inner.caughtUp !== undefined) counting.caughtUp = () => inner.caughtUp!()
  if (inner.newestFor !== undefined) counting.newestFor = (kind, deviceId) => inner.newestFor!(kind, deviceId)
  shareDispatcher(counting, inner)
  return counting
}
