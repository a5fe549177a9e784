/**
 * The seam through which a dialect whose message writes commit out of stamp order (PostgreSQL
 * with its bus: writes ride their statement's NOTIFY, no lock held until commit) hands the hub
 * its log in order. Core uses it and never builds it: the dialect does (store/ordering/), and the
 * composition root passes it (`createDeviceHub({ store, bus, ordering })`). Without it writes
 * publish on the bus inside their transaction and the store's high-water mark is the mark.
 */
import type { Logger } from '../ports.js'
import type { Bus } from './bus.js'
import type { LogOrder } from './message-log.js'

/** What the hub reads and writes through where commits land out of stamp order. */
export interface OrderedLog {
  /**
   * The bus the hub's listeners hear: message events in stamp order. `publish` goes to the bus
   * underneath; `close` closes it.
   */
  readonly bus: Bus
  /** The NOTIFY channel the write statements send their events on (the bus underneath hears it). */
  readonly channel: string
  /** Where readers stand: the mark, and waiting for this process's own writes to reach it. */
  readonly order: LogOrder
  /** Monitoring: events waiting for an earlier link, resynchronisations since the start. */
  stats(): { readonly waiting: number, readonly resyncs: number }
}

/**
 * Builds the ordered log with the hub's logger; resolves once the first mark is known.
 *
 * @example
 * // devicehub/postgres
 * const ordering: LogOrdering = postgresOrdering(store, bus)
 * const hub = await createDeviceHub({ store, bus, ordering })
 */
export type LogOrdering = (hub: { logger: Logger }) => Promise<OrderedLog>
