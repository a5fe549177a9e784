/**
 * Shared input checks with the contract's messages. Schemas at the edge reject wrong types;
 * these cover the rules whose messages the contract fixes.
 */
import { badRequest, Messages } from './errors.js'
import type { JsonObject } from './ports.js'

const VALIDATION_PREFIX = 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: '

/** Java's bean-validation text: the prefix, then one line per violation. */
export function validationMessage (violations: ReadonlyArray<{ property: string, value: unknown, message: string }>): string {
  const lines = violations.map((v) => `On property ${v.property} (value: ${v.value === undefined ? 'null' : String(v.value)}): ${v.message} ; `)
  return `${VALIDATION_PREFIX}\n${lines.join('\n')}`
}

/** A JSON-object field (`data`, `parameters`, `result`): an object or null, else 400 (§1.3). */
export function jsonObjectOrNull (value: unknown): JsonObject | null | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(Messages.notJsonObject)
  return value as JsonObject
}

/** Throws `Object is null` when a body that must be present is missing. */
export function requireBody<T> (body: T | undefined | null): T {
  if (body === undefined || body === null) throw badRequest(Messages.objectIsNull)
  return body
}
