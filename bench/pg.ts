/**
 * PostgreSQL for the benchmarks: with `BENCH_PG_URL` set (a superuser URL such as
 * `postgres://postgres@127.0.0.1:5432/test`), every devicehub child gets a fresh database
 * created for the run and dropped when it ends, instead of a SQLite file.
 *
 * @example
 * BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/test npm run bench -- roundtrip roundtrip2
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

const created: string[] = []

/** The PostgreSQL admin URL of this run, or undefined for SQLite. */
export function benchPostgresUrl (): string | undefined {
  const url = process.env.BENCH_PG_URL
  return url === undefined || url === '' ? undefined : url
}

/** What the tables name as the database. */
export function benchDatabaseLabel (): string {
  return benchPostgresUrl() === undefined ? 'SQLite file' : 'PostgreSQL'
}

/** Runs one statement on a connection of its own (opened and closed here); its rows. */
async function queryOnce<R extends pg.QueryResultRow> (url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<R>(sql)).rows
  } finally {
    await client.end()
  }
}

/**
 * The transaction id PostgreSQL assigns next (cluster-wide): every transaction that writes takes
 * one, a read takes none, so the difference over a run counts its write transactions (each a
 * commit and a WAL flush), at once and exactly. `pg_stat_database`'s commit counts reach readers
 * only when a backend flushes them (at most once a second, and an idle one later), which skews a
 * window of seconds; they count reads too. Nothing else may write to the cluster meanwhile.
 */
export async function nextTransactionId (url: string): Promise<number> {
  const rows = await queryOnce<{ n: string }>(url, 'select pg_snapshot_xmax(pg_current_snapshot())::text as n')
  return Number(rows[0]?.n ?? NaN)
}

/** Creates an empty database for one benchmark server (dropped by `dropBenchDatabases`); returns its URL. */
export async function createBenchDatabase (adminUrl: string): Promise<string> {
  const name = `devicehub_bench_${process.pid}_${randomBytes(4).toString('hex')}`
  await queryOnce(adminUrl, `create database ${pg.escapeIdentifier(name)}`)
  created.push(name)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** Drops every database this run created (forcing out sessions a crashed child left behind). */
export async function dropBenchDatabases (): Promise<void> {
  const adminUrl = benchPostgresUrl()
  if (adminUrl === undefined) return
  for (const name of created.splice(0)) {
    await queryOnce(adminUrl, `drop database if exists ${pg.escapeIdentifier(name)} with (force)`)
  }
}
