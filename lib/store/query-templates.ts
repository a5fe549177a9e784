/**
 * Hot statements compiled once per store (issue #26): building and compiling a Kysely query costs
 * more CPU than SQLite takes to run most of ours, and the round trip's statements have a fixed
 * shape. A template is built once with a marker in each value's place and compiled by the store's
 * own dialect; a call only fills the markers' places in the parameter list and runs the SQL text
 * (which the SQLite statement cache then finds prepared; on PostgreSQL the dialect's prefix makes
 * it a named prepared statement: dialects/prepared-statements.ts). A statement whose shape depends
 * on its input (a patch's columns) takes one template per shape, named by its key, so the
 * statements a connection prepares stay as few as the templates.
 *
 * The text is compiled already, so what Kysely's executor would add per call is only its promise
 * layers, connection providers and plugins: where the dialect can run a text on the right
 * connection itself (a `DirectExecutor`), the template goes straight there.
 */
import { CompiledQuery } from 'kysely'
import type { Compilable, QueryResult } from 'kysely'
import type { QueryTiming } from './query-timing.js'
import { operationOf } from './query-timing.js'

/** Stands for the value at `index` of a call's values while a template is built. */
class Slot {
  constructor (readonly index: number) {}
}

/** Where a template runs: the store's pool or one of its transactions. */
export interface QueryRunner {
  readonly isTransaction: boolean
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>
}

/**
 * Runs a compiled text on the connection a handle stands for, past Kysely's executor. Returns
 * undefined where it cannot do that safely at this moment; the template then goes through
 * `db.executeQuery` as any query would.
 */
export interface DirectExecutor {
  execute(db: QueryRunner, sql: string, parameters: readonly unknown[]): unknown[] | Promise<unknown[]> | undefined
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

export interface QueryTemplateOptions {
  /** Where run times are reported (the store's query metrics). */
  timing?: QueryTiming
  /** Goes before each text that does not start with it already (the dialect's `templatePrefix`). */
  prefix?: string
  /** The dialect's own way to run a text (default: none, every call goes through Kysely). */
  direct?: DirectExecutor
}

/**
 * @example
 * const templates = createQueryTemplates({ timing, prefix: dialect.templatePrefix })
 */
export function createQueryTemplates (options: QueryTemplateOptions = {}): QueryTemplates {
  const { timing, prefix = '', direct } = options
  const templates = new Map<string, Template>()

  const compile = (build: (slot: SlotOf) => Compilable<unknown>): Template => {
    const compiled = build((index) => new Slot(index) as never).compile()
    return {
      sql: compiled.sql.startsWith(prefix) ? compiled.sql : prefix + compiled.sql,
      parameters: compiled.parameters.map((p) => p instanceof Slot ? { index: p.index } : { value: p }),
      operation: operationOf(compiled.query.kind)
    }
  }

  return {
    async run<R>(db: QueryRunner, key: string, build: (slot: SlotOf) => Compilable<R>, values: readonly unknown[]): Promise<R[]> {
      let template = templates.get(key)
      if (template === undefined) templates.set(key, template = compile(build))
      const parameters = template.parameters.map((p) => 'index' in p ? values[p.index] : p.value)
      const started = timing?.listening === true ? performance.now() : -1
      let rows = direct?.execute(db, template.sql, parameters) as R[] | Promise<R[]> | undefined
      if (rows === undefined) rows = (await db.executeQuery<R>(CompiledQuery.raw(template.sql, parameters))).rows
      else if (rows instanceof Promise) rows = await rows
      if (started >= 0) timing?.report(template.operation, (performance.now() - started) / 1000)
      return rows
    }
  }
}
