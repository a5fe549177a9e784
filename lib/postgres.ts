/**
 * `devicehub/postgres`: the PostgreSQL store, the bus that wakes the long polls and streams of
 * every instance on one database (LISTEN/NOTIFY), and the ordering of the log that writes riding
 * that bus need (they commit out of stamp order). Needs the optional `pg` package.
 *
 * @example
 * import { createPostgresDoorbell, openPostgresStore, postgresOrdering } from 'devicehub/postgres'
 * const url = 'postgres://devicehub@db:5432/devicehub'
 * const store = await openPostgresStore(url)
 * const bus = await createPostgresDoorbell(url)
 * const hub = await createDeviceHub({ store, bus, ordering: postgresOrdering(store, bus) })
 */
export { openPostgresStore } from './store/dialects/postgres.js'
export type { PostgresStoreOptions } from './store/dialects/postgres.js'
export { createPostgresDoorbell } from './doorbells/postgres-doorbell.js'
export type { PostgresDoorbell, PostgresDoorbellOptions } from './doorbells/postgres-doorbell.js'
export { postgresOrdering } from './store/ordering/postgres-ordering.js'
export type { PostgresOrderingOptions, StatementBus } from './store/ordering/postgres-ordering.js'
