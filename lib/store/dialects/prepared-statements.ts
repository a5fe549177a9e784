/**
 * Server-side prepared statements for the PostgreSQL hot path (issue #26). Kysely sends every
 * query as unnamed text, so PostgreSQL parses and plans it again each time. For the message
 * write statements (pg-message-writes.ts: CTEs over `unnest`, the stamp draw, the bus event)
 * that was about half the database's CPU per statement: measured on one backend, a 16-row
 * notification insert cost 1.24–1.31 ms of CPU as text and 0.65–0.83 ms prepared.
 *
 * A statement opts in by starting with `PREPARED_MARK` (a SQL comment, so the text still runs
 * unchanged anywhere). The pool's clients send such texts as named statements (`dh_` and a hash
 * of the text): the first execution on a connection parses it, later ones only bind and run it.
 * Only marked texts are named, so the set of statements a connection holds stays bounded by the
 * few texts the code marks (never one per distinct query Kysely builds).
 */
import { createHash } from 'node:crypto'
import type { RawBuilder } from 'kysely'
import { sql } from 'kysely'

/** The comment a statement text starts with to be prepared (see the file's header). */
export const PREPARED_MARK = '/* devicehub:prepared */ '

/**
 * Put first in a `sql` template: the statement runs prepared on PostgreSQL.
 *
 * @example
 * await sql`${prepared()}select * from devices where device_id = ${id}`.execute(db)
 */
export function prepared (): RawBuilder<unknown> {
  return sql.raw(PREPARED_MARK)
}

type Query = (...args: unknown[]) => unknown

/** The slice of a `pg.Client` this needs. */
export interface QueryClient {
  query: Query
}

/**
 * Makes `client` send marked statement texts as named prepared statements; `names` (text to
 * name) is shared by a pool's clients so each text is hashed once.
 *
 * @example
 * pool.on('connect', (client) => prepareMarkedStatements(client, names))
 */
export function prepareMarkedStatements (client: QueryClient, names: Map<string, string>): void {
  const query = client.query.bind(client) as Query
  client.query = (config: unknown, ...rest: unknown[]) => {
    if (typeof config !== 'string' || !config.startsWith(PREPARED_MARK) || !Array.isArray(rest[0])) return query(config, ...rest)
    let name = names.get(config)
    if (name === undefined) {
      name = `dh_${createHash('sha1').update(config).digest('hex').slice(0, 20)}`
      names.set(config, name)
    }
    return query({ name, text: config, values: rest[0] }, ...rest.slice(1))
  }
}
