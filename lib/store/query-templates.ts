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
  /**
   * Runs `statements` (built when taken) as one whole transaction of its own for `db` (the
   * store's own handle) and answers each statement's rows: at once (SQLite on the event loop) or
   * a promise (SQLite's writer thread); undefined where it cannot (inside a transaction, while
   * another is open, or never on this dialect).
   */
  transaction(db: QueryRunner, statements: () => TemplateStatement[]): { rows: unknown[][] | Promise<unknown[][]> } | undefined
}

/** One statement of a transaction, ready to run. */
export interface TemplateStatement {
  sql: string
  parameters: unknown[]
}

/** A marker in a value's place; typed `never` so it fits any column's value. */
export type SlotOf = (index: number) => never

/** One statement of {@link QueryTemplates.transact}: the arguments of `run`, as a value. */
export interface TemplateCall {
  key: string
  build: (slot: SlotOf) => Compilable<unknown>
  values: readonly unknown[]
}

/**
 * The statements of one write transaction, all known before the first runs: a later one reads
 * what an earlier one wrote in SQL (the stamp the clock step drew), never in between, so a
 * dialect can send the whole transaction at once (SQLite's writer thread: one message).
 * `finish` makes the write's value from each statement's rows, in the order of `calls`.
 */
export interface TemplateWrite<T> {
  calls: TemplateCall[]
  finish(rows: unknown[][]): T
}

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
  /**
   * Runs the statements of `write` as one transaction. Outside a transaction, where the dialect
   * can run a whole one of its own (SQLite: at once on the event loop while no other is open, or
   * on its writer thread), it does: no transaction object, no Kysely executor per statement.
   * Otherwise `open` opens one (or joins the caller's) and the statements run in it through `run`.
   *
   * @example
   * const record = await templates.transact(db, insertWrite(input), (body) => inTransaction(db, body))
   */
  transact<T>(db: QueryRunner, write: TemplateWrite<T>, open: (body: (trx: QueryRunner) => Promise<T>) => Promise<T>): Promise<T>
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

  const templateOf = (key: string, build: (slot: SlotOf) => Compilable<unknown>): Template => {
    let template = templates.get(key)
    if (template === undefined) templates.set(key, template = compile(build))
    return template
  }
  const parametersOf = (template: Template, values: readonly unknown[]): unknown[] =>
    template.parameters.map((p) => 'index' in p ? values[p.index] : p.value)

  /** When a run starts, for the metrics (-1: nobody listens). */
  const startTime = (): number => timing?.listening === true ? performance.now() : -1
  const reportRun = (template: Template, started: number): void => {
    if (started >= 0) timing?.report(template.operation, (performance.now() - started) / 1000)
  }

  const run = async <R>(db: QueryRunner, key: string, build: (slot: SlotOf) => Compilable<R>, values: readonly unknown[]): Promise<R[]> => {
    const template = templateOf(key, build)
    const parameters = parametersOf(template, values)
    const started = startTime()
    let rows = direct?.execute(db, template.sql, parameters) as R[] | Promise<R[]> | undefined
    if (rows === undefined) rows = (await db.executeQuery<R>(CompiledQuery.raw(template.sql, parameters))).rows
    else if (rows instanceof Promise) rows = await rows
    reportRun(template, started)
    return rows
  }

  const statementOf = (call: TemplateCall): TemplateStatement => {
    const template = templateOf(call.key, call.build)
    return { sql: template.sql, parameters: parametersOf(template, call.values) }
  }

  return {
    run,
    async transact (db, write, open) {
      const { calls, finish } = write
      // The executor declines inside a transaction, while another is open, or always (PostgreSQL).
      const started = startTime()
      const done = direct?.transaction(db, () => calls.map(statementOf))
      if (done !== undefined) {
        const rows = await done.rows
        // Each statement is timed with the whole transaction's time: they ran as one.
        for (const call of calls) reportRun(templateOf(call.key, call.build), started)
        return finish(rows)
      }
      return open(async (trx) => {
        const rows: unknown[][] = []
        for (const call of calls) rows.push(await run(trx, call.key, call.build, call.values))
        return finish(rows)
      })
    }
  }
}
