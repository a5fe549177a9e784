/**
 * PostgreSQL through node-postgres: a `pg.Pool` under Kysely's PostgresDialect. `pg` is loaded
 * lazily (dynamic import) so SQLite users never need it installed. Every pooled connection
 * parses int8 and numeric to JS numbers through the pool's own type table (the global pg
 * parsers stay untouched), and can be pinned to one schema with `search_path`.
 */
import type { Kysely } from 'kysely'
import { PostgresDialect, Kysely as KyselyClass, sql } from 'kysely'
import type * as PgModule from 'pg'
import type { Pool, PoolConfig } from 'pg'
import { PREPARED_MARK, prepareMarkedStatements } from './prepared-statements.js'
import type { QueryClient } from './prepared-statements.js'
import type { Database as Schema } from '../database.js'
import type { Durability } from '../durability.js'
import type { StoreDialect } from '../dialect.js'
import type { KyselyStore } from '../kysely-store.js'
import { createKyselyStore } from '../kysely-store.js'
import type { DirectExecutor, QueryRunner } from '../query-templates.js'
import { migrateToLatest, postgresMigrationDialect } from '../migrations/index.js'
import { createPgMessageWrites } from '../repositories/pg-message-writes.js'

/** PostgreSQL type OIDs the pool parses to numbers (epoch-ms timestamps, ids and counts fit). */
const INT8_OID = 20
const NUMERIC_OID = 1700

/** Schema names are restricted to plain lower-case identifiers: no quoting rules to get wrong. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface PostgresStoreOptions {
  /** Run pending migrations on open (default true; concurrent openers serialise on a lock). */
  migrate?: boolean
  /**
   * Keep every table in this schema: it is created when missing and every pooled connection
   * sets `search_path` to it. A plain lower-case identifier. Default: the server's search_path.
   */
  schema?: string
  /** Largest number of pooled connections (default 10). */
  maxConnections?: number
  /** `normal`: `synchronous_commit=off` on the pool's connections; `full` or absent: the server's setting (see durability.ts). */
  durability?: Durability
}

/** The pg driver's error for a violated constraint carries the SQLSTATE in `code`. */
export const postgresDialect: StoreDialect = {
  name: 'postgres',
  migrations: postgresMigrationDialect,
  templatePrefix: PREPARED_MARK,
  classifyError (error) {
    const code = (error as { code?: unknown } | null)?.code
    if (code === '23505') return 'unique'
    if (code === '23503') return 'foreign-key'
    return undefined
  },
  async notify (db, channel, payload) {
    // pg_notify (not NOTIFY) takes the channel as a bound parameter. On a transaction's
    // connection the notification is queued and delivered exactly at commit.
    await sql`select pg_notify(${channel}, ${payload})`.execute(db)
  },
  // Each write one statement: the stamp draw, the row and its NOTIFY (pg-message-writes.ts).
  messageWrites: createPgMessageWrites
}

/**
 * Opens (and by default migrates) a PostgreSQL store.
 *
 * @example
 * const store = await openPostgresStore('postgres://devicehub@db.internal:5432/devicehub')
 * const isolated = await openPostgresStore(url, { schema: 'tenant_a' })
 */
export async function openPostgresStore (url: string, options: PostgresStoreOptions = {}): Promise<KyselyStore> {
  const { schema } = options
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(`Invalid PostgreSQL schema name '${schema}': use lower-case letters, digits and '_'`)
  }
  const sessions = new Set<number>()
  const pool = await createPool(url, options, sessions)
  const db = new KyselyClass<Schema>({ dialect: new PostgresDialect({ pool }) })
  try {
    if (schema !== undefined) await sql`create schema if not exists ${sql.id(schema)}`.execute(db)
    if (options.migrate !== false) {
      // The migrator must look for its bookkeeping tables in our schema only: unqualified, it
      // would take another schema's `devicehub_migrations` for ours.
      const current = schema ?? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      await migrateRetryingCatalogRaces(db as Kysely<unknown>, current)
    }
  } catch (error) {
    await db.destroy()
    throw error
  }
  return createKyselyStore(db, postgresDialect, { directExecutor: (root) => pooledTemplates(pool, root), sessions })
}

/**
 * The store's query templates straight on the pool (issue #26): `pool.query` takes a connection,
 * runs the text (named when marked: prepared-statements.ts) and gives it back, which is what
 * Kysely's executor does for a compiled query, less its promise layers and plugins. Only for the
 * store's own handle: a transaction's statements, or those of a handle bound to one connection,
 * must run on that connection, through Kysely.
 */
function pooledTemplates (pool: Pool, root: QueryRunner): DirectExecutor {
  return {
    execute (db, text, parameters) {
      if (db !== root) return undefined
      return pool.query(text, parameters as unknown[]).then((result) => result.rows as unknown[])
    },
    // A transaction on PostgreSQL spans round trips: it needs a connection of its own (Kysely's).
    transaction: () => undefined
  }
}

/**
 * Kysely's migrator introspects the tables of every schema. If another schema is dropped at that
 * moment (other tenants, test runs), PostgreSQL reports a schema, table or column of it missing
 * and the introspection fails although nothing is wrong with ours: try again. A real failure of
 * our own migration fails again the same way and is thrown after the last attempt.
 */
const CATALOG_RACE_CODES = new Set(['3F000', '42P01', '42703', 'XX000'])

async function migrateRetryingCatalogRaces (db: Kysely<unknown>, schema: string | undefined): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await migrateToLatest(db, postgresMigrationDialect, { schema })
      return
    } catch (error) {
      const cause = (error as { cause?: { code?: string, message?: string } }).cause
      const ours = schema !== undefined && (cause?.message ?? '').includes(`"${schema}"`)
      if (!CATALOG_RACE_CODES.has(cause?.code ?? '') || ours || attempt >= 5) throw error
    }
  }
}

/** A pool whose open connections' server process ids are kept in `sessions` (`KyselyStore.sessions`). */
async function createPool (url: string, options: PostgresStoreOptions, sessions: Set<number>): Promise<Pool> {
  const pg = await loadPg()
  const types = new pg.default.TypeOverrides()
  const toNumber = (value: string): number => Number(value)
  types.setTypeParser(INT8_OID, 'text', toNumber)
  types.setTypeParser(NUMERIC_OID, 'text', toNumber)
  const config: PoolConfig = {
    connectionString: url,
    types,
    max: options.maxConnections ?? 10,
    // Named, so operators tell the store's pool from the bus's LISTEN connection in pg_stat_activity.
    application_name: 'devicehub'
  }
  const settings: string[] = []
  if (options.schema !== undefined) settings.push(`-c search_path=${options.schema}`)
  if (options.durability === 'normal') settings.push('-c synchronous_commit=off')
  if (settings.length > 0) config.options = settings.join(' ')
  const pool = new pg.default.Pool(config)
  // An idle client losing its server (restart, pg_terminate_backend) emits 'error' on the pool;
  // unhandled it would crash the process. The pool drops it and connects a new one on demand.
  pool.on('error', () => {})
  // The message writes run as prepared statements (prepared-statements.ts); names shared by the pool's clients.
  const names = new Map<string, string>()
  pool.on('connect', (client) => {
    prepareMarkedStatements(client as unknown as QueryClient, names)
    const pid = processId(client)
    if (pid !== undefined) sessions.add(pid)
  })
  pool.on('remove', (client) => {
    const pid = processId(client)
    if (pid !== undefined) sessions.delete(pid)
  })
  return pool
}

/** The server process id of a connected client (from the server's BackendKeyData; `processID` is not in pg's types). */
function processId (client: object): number | undefined {
  const pid = (client as { processID?: unknown }).processID
  return typeof pid === 'number' ? pid : undefined
}

/**
 * Loads `pg` on first use, with an actionable message when it is not installed.
 * @internal Not in the published declarations: `pg` is an optional peer, so its types must not leak.
 */
export async function loadPg (): Promise<typeof PgModule> {
  try {
    return await import('pg')
  } catch (error) {
    throw new Error("PostgreSQL support needs the 'pg' package: npm install pg", { cause: error })
  }
}
