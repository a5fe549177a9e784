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

/** Runs one statement's text with its parameters at once and answers its rows (a `DirectExecutor.transaction` body's step). */
export type ExecuteNow = (sql: string, parameters: readonly unknown[]) => unknown[]

/**
 * Runs a compiled text on the connection a handle stands for, past Kysely's executor. Returns
 * undefined where it cannot do that safely at this moment; the template then goes through
 * `db.executeQuery` as any query would.
 */
export interface DirectExecutor {
  execute(db: QueryRunner, sql: string, parameters: readonly unknown[]): unknown[] | Promise<unknown[]> | undefined
  /**
   * Runs `body` now as one whole transaction on the connection of `db` (the store's own handle),
   * synchronously, each statement through `execute`, and answers its value; undefined where it
   * cannot (inside a transaction, while another is open, or never on this dialect).
   */
  transaction<T>(db: QueryRunner, body: (execute: ExecuteNow) => T): { value: T } | undefined
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
 * The statements of one write, each needing the rows of the one before (a clock step, then the
 * row it stamps): a generator that yields each statement and is resumed with its rows.
 */
export type TemplateSteps<T> = Generator<TemplateCall, T, unknown[]>

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
   * Runs the statements of `steps` as one transaction. Outside a transaction, where the dialect
   * can run a whole one at once (SQLite while no other is open), it does, in one synchronous
   * step: no transaction object, no promise per statement. Otherwise `open` opens one (or joins
   * the caller's) and the statements run in it through `run`.
   *
   * @example
   * const record = await templates.transact(db, () => insertSteps(input), (body) => inTransaction(db, body))
   */
  transact<T>(db: QueryRunner, steps: () => TemplateSteps<T>, open: (body: (trx: QueryRunner) => Promise<T>) => Promise<T>): Promise<T>
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

  /** The steps, each statement run at once by `execute` (inside the dialect's own transaction). */
  const runAtOnce = <T>(steps: TemplateSteps<T>, execute: ExecuteNow): T => {
    let next = steps.next()
    while (next.done !== true) {
      const template = templateOf(next.value.key, next.value.build)
      const started = startTime()
      const rows = execute(template.sql, parametersOf(template, next.value.values))
      reportRun(template, started)
      next = steps.next(rows)
    }
    return next.value
  }

  return {
    run,
    async transact (db, steps, open) {
      // The executor declines inside a transaction, while another is open, or always (PostgreSQL).
      const done = direct?.transaction(db, (execute) => runAtOnce(steps(), execute))
      if (done !== undefined) return done.value
      return open(async (trx) => {
        const iterator = steps()
        let next = iterator.next()
        while (next.done !== true) next = iterator.next(await run(trx, next.value.key, next.value.build, next.value.values))
        return next.value
      })
    }
  }
}
