/**
 * Store query latency for monitoring: a Kysely plugin that times each query from compilation to
 * result and tells the listeners (the metrics module). Nothing is timed while nobody listens.
 * Failed queries never reach `transformResult`, so only completed ones are measured.
 */
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import type { QueryListener } from '../core/ports.js'

const OPERATIONS: Record<string, string> = {
  SelectQueryNode: 'select',
  InsertQueryNode: 'insert',
  UpdateQueryNode: 'update',
  DeleteQueryNode: 'delete',
  RawNode: 'raw'
}

/**
 * The operation label of a query's root node kind, as the metrics report it.
 *
 * @example
 * operationOf('SelectQueryNode') // 'select'
 */
export function operationOf (kind: string): string {
  return OPERATIONS[kind] ?? 'other'
}

export interface QueryTiming {
  readonly plugin: KyselyPlugin
  /** Adds a listener; returns the function that removes it. */
  observe(listener: QueryListener): () => void
  /** Whether anyone listens: a query run outside the plugin's view (query-templates.ts) is timed only then. */
  readonly listening: boolean
  /** Tells the listeners of such a query. */
  report(operation: string, seconds: number): void
}

/**
 * @example
 * const timing = createQueryTiming()
 * const timed = db.withPlugin(timing.plugin)
 * timing.observe(({ operation, seconds }) => histogram.observe({ operation }, seconds))
 */
export function createQueryTiming (): QueryTiming {
  const listeners = new Set<QueryListener>()
  const started = new WeakMap<object, { at: number, operation: string }>()
  return {
    plugin: {
      transformQuery (args: PluginTransformQueryArgs): RootOperationNode {
        if (listeners.size > 0) started.set(args.queryId, { at: performance.now(), operation: operationOf(args.node.kind) })
        return args.node
      },
      async transformResult (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
        const start = started.get(args.queryId)
        if (start !== undefined) {
          started.delete(args.queryId)
          const seconds = (performance.now() - start.at) / 1000
          for (const listener of listeners) listener({ operation: start.operation, seconds })
        }
        return args.result
      }
    },
    get listening () {
      return listeners.size > 0
    },
    report (operation, seconds) {
      for (const listener of listeners) listener({ operation, seconds })
    },
    observe (listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    }
  }
}
