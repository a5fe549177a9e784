/**
 * The order of the log on PostgreSQL with its bus, as the hub takes it (`LogOrdering`, core's
 * seam): message writes ride their statement's NOTIFY on the bus's channel and commit out of
 * stamp order, so their events pass through the ordered bus (ordered-bus.ts) over the store's
 * stamp draw (stamp-order.ts) before any listener hears them.
 */
import type { Bus } from '../../core/realtime/bus.js'
import type { LogOrdering } from '../../core/realtime/log-ordering.js'
import type { KyselyStore } from '../kysely-store.js'
import type { OrderedBusOptions } from './ordered-bus.js'
import { createOrderedBus } from './ordered-bus.js'
import { createStampOrder } from './stamp-order.js'

/** A bus whose events PostgreSQL statements can send: the PostgreSQL bus (`createPostgresDoorbell`). */
export interface StatementBus extends Bus {
  /** The NOTIFY channel the bus listens on. */
  readonly notifyChannel: string
  /** Stops delivering the message and revocation events these server processes send (see PostgresDoorbell). */
  ignoreWritesOf(sessions: ReadonlySet<number>): void
}

/** Tuning of the ordered bus; the hub gives the logger. */
export type PostgresOrderingOptions = Omit<OrderedBusOptions, 'logger'>

/**
 * The ordering of `store`'s log over `bus`, for `createDeviceHub({ store, bus, ordering })`.
 * Every instance that writes to one PostgreSQL database through the PostgreSQL bus needs it.
 *
 * @example
 * const store = await openPostgresStore(url)
 * const bus = await createPostgresDoorbell(url)
 * const hub = await createDeviceHub({ store, bus, ordering: postgresOrdering(store, bus) })
 */
export function postgresOrdering (store: KyselyStore, bus: StatementBus, options: PostgresOrderingOptions = {}): LogOrdering {
  if (store.dialect !== 'postgres') {
    throw new Error(`postgresOrdering needs a PostgreSQL store, not ${store.dialect}: other stores commit in stamp order`)
  }
  return async ({ logger }) => {
    const ordered = await createOrderedBus(bus, createStampOrder(store.db), { ...options, logger })
    // This store's writes reach the ordered bus from their statements' answers (the log's
    // `written`): the bus need not parse their NOTIFYs back.
    bus.ignoreWritesOf(store.sessions)
    return {
      bus: ordered,
      channel: bus.notifyChannel,
      order: ordered,
      stats: () => ({ waiting: ordered.waiting, resyncs: ordered.resyncs })
    }
  }
}
