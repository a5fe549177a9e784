/**
 * Hot statements compiled once per store (issue #26): building and compiling a Kysely query costs
 * more CPU than SQLite takes to run most of ours, and the round trip's statements have a fixed
 * shape. A template is built once with a marker in each value's place and compiled by the store's
 * own dialect; a call only fills the markers' places in the parameter list and runs the SQL text
 * (which the SQLite statement cache then finds prepared; on PostgreSQL the dialect's prefix makes
 * it a named prepared statement: dialects/prepared-statements.ts). A statement whose shape depends
 * on its input (a patch's columns) takes one template per shape, named by its key, so the
 * statements a connection prepares stay as few as the templates.
 */
import { CompiledQuery } from 'kysely'
import type { Compilable, QueryResult } from 'kysely'
import type { QueryTiming } from './query-timing.js'

/** Stands for the value at `index` of a call's values while a template is built. */
class Slot {
  constructor (readonly index: number) {}
}

/** Where a template runs: the store's pool or one of its transactions. */
export interface QueryRunner {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>
}

/** A marker in a value's place; typed `never` so it fits any column's value. */
export type SlotOf = (index: number) => never

interface Template {
  sql: string
  /** Per parameter: the index of the call's value, or the constant the template was built with. */
  parameters: Array<{ index: number } | { value: unknown }>
  operation: string
}

export interface QueryTemplates {
  /**
   * Runs the statement of `key` on `db` (the pool or a transaction) with `values`; `build` makes it
   * from markers (`slot(i)` in place of `values[i]`) on the first call only.
   *
   * @example
   * const rows = await templates.run(db, 'command-by-id', (slot) => db.selectFrom('commands').selectAll().where('id', '=', slot(0)), [id])
   */
  run<R>(db: QueryRunner, key: string, build: (slot: SlotOf) => Compilable<R>, values: readonly unknown[]): Promise<R[]>
}

const OPERATIONS: Record<string, string> = {
  SelectQueryNode: 'select', InsertQueryNode: 'insert', UpdateQueryNode: 'update', DeleteQueryNode: 'delete', RawNode: 'raw'
}

/**
 * `prefix` goes before each text that does not start with it already (the dialect's
 * `templatePrefix`).
 *
 * @example
 * const templates = createQueryTemplates(timing, '')
 */
export function createQueryTemplates (timing?: QueryTiming, prefix = ''): QueryTemplates {
  const templates = new Map<string, Template>()

  const compile = (build: (slot: SlotOf) => Compilable<unknown>): Template => {
    const compiled = build((index) => new Slot(index) as never).compile()
    return {
      sql: compiled.sql.startsWith(prefix) ? compiled.sql : prefix + compiled.sql,
      parameters: compiled.parameters.map((p) => p instanceof Slot ? { index: p.index } : { value: p }),
      operation: OPERATIONS[compiled.query.kind] ?? 'other'
    }
  }

  return {
    async run<R>(db: QueryRunner, key: string, build: (slot: SlotOf) => Compilable<R>, values: readonly unknown[]): Promise<R[]> {
      let template = templates.get(key)
      if (template === undefined) templates.set(key, template = compile(build))
      const parameters = template.parameters.map((p) => 'index' in p ? values[p.index] : p.value)
      const query = CompiledQuery.raw(template.sql, parameters)
      const result = timing === undefined
        ? await db.executeQuery<R>(query)
        : await timing.time(template.operation, () => db.executeQuery<R>(query))
      return result.rows
    }
  }
}
