/**
 * The store's error boundary: driver errors for unique and foreign-key violations become
 * `DeviceHubError('CONFLICT')`; services that owe a specific message catch that code.
 */
import { DeviceHubError, Messages } from '../core/errors.js'
import type { StoreDialect } from './dialect.js'

export class ConstraintError extends DeviceHubError {
  constructor (readonly constraint: 'unique' | 'foreign-key', cause: unknown) {
    super('CONFLICT', Messages.conflict, { cause })
  }
}

/** Wraps every async method of a repository so driver constraint errors are mapped. */
export function guardRepository<T extends object> (repository: T, dialect: StoreDialect): T {
  const guarded: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(repository)) {
    guarded[key] = typeof value !== 'function'
      ? value
      : async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(repository, args)
        } catch (error) {
          const kind = dialect.classifyError(error)
          if (kind !== undefined) throw new ConstraintError(kind, error)
          throw error
        }
      }
  }
  return guarded as T
}
