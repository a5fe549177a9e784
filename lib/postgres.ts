/**
 * `devicehub/postgres`: the PostgreSQL store and the doorbell that wakes the long polls and
 * streams of every instance on one database (LISTEN/NOTIFY). Needs the optional `pg` package.
 *
 * @example
 * import { createPostgresDoorbell, openPostgresStore } from 'devicehub/postgres'
 * const url = 'postgres://devicehub@db:5432/devicehub'
 * const hub = await createDeviceHub({ store: await openPostgresStore(url), bus: await createPostgresDoorbell(url) })
 */
export { openPostgresStore } from './store/dialects/postgres.js'
export type { PostgresStoreOptions } from './store/dialects/postgres.js'
export { createPostgresDoorbell } from './doorbells/postgres-doorbell.js'
export type { PostgresDoorbell, PostgresDoorbellOptions } from './doorbells/postgres-doorbell.js'
