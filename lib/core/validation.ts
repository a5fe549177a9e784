/**
 * Shared input checks with the contract's messages. Schemas at the edge reject wrong types;
 * these cover the rules whose messages the contract fixes.
 */
import { badRequest, Messages } from './errors.js'
import type { JsonObject } from './ports.js'

const VALIDATION_PREFIX = 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: '

/** Java's bean-validation text: the prefix, then one line per violation. */
export function validationMessage (violations: ReadonlyArray<{ property: string, value: unknown, message: string }>): string {
  const lines = violations.map((v) =>
    `On property ${v.property} (value: ${v.value === undefined ? 'null' : String(v.value)}): ${v.message} ; `)
  return `${VALIDATION_PREFIX}\n${lines.join('\n')}`
}

/** The deepest JSON nesting accepted anywhere (objects and arrays; issue #16). */
export const MAX_JSON_DEPTH = 400

export const JSON_TOO_DEEP = `JSON value is nested too deeply: at most ${MAX_JSON_DEPTH} levels`
export const NUMBER_NOT_FINITE = 'Numbers must be finite'

/**
 * Checks a JSON value before it is stored: at most {@link MAX_JSON_DEPTH} levels of nesting and
 * only finite numbers (JSON.parse turns `1e400` into Infinity, which no column or reader
 * survives). Recursive, allocating nothing (it runs on every message's parameters), and it stops
 * at the depth limit, so a hostile depth cannot overflow the stack here.
 *
 * @example
 * checkJsonValue({ a: [1, 2] }) // ok
 * checkJsonValue({ a: Infinity }) // throws 400 'Numbers must be finite'
 */
export function checkJsonValue (value: unknown): void {
  const fault = jsonFault(value, 1)
  if (fault !== undefined) throw badRequest(fault)
}

/**
 * Whether `value`, or what lies under it down to `levels` objects below it, holds a number that
 * is not finite. Recursive, allocating nothing: for values whose depth a parser already bounded
 * (HTTP bodies and querystrings); {@link checkJsonValue} also bounds the depth itself.
 *
 * @example
 * holdsNonFinite({ a: [1, Infinity] }, Number.POSITIVE_INFINITY) // true
 * holdsNonFinite({ a: [[Infinity]] }, 1) // false: not looked at that deep
 */
export function holdsNonFinite (value: unknown, levels: number): boolean {
  if (typeof value === 'number') return !Number.isFinite(value)
  if (value === null || typeof value !== 'object' || levels < 0) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsNonFinite(value[i], levels - 1)) return true
    return false
  }
  for (const key in value) if (holdsNonFinite((value as Record<string, unknown>)[key], levels - 1)) return true
  return false
}

/** The message of the first rule `value` breaks, its nesting counted from `depth`; undefined if none. */
function jsonFault (value: unknown, depth: number): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : NUMBER_NOT_FINITE
  if (value === null || typeof value !== 'object') return undefined
  if (depth > MAX_JSON_DEPTH) return JSON_TOO_DEEP
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const fault = jsonFault(value[i], depth + 1)
      if (fault !== undefined) return fault
    }
    return undefined
  }
  for (const key in value) {
    const fault = jsonFault((value as Record<string, unknown>)[key], depth + 1)
    if (fault !== undefined) return fault
  }
  return undefined
}

/**
 * Whether JSON text nests objects and arrays deeper than `max` (brackets inside strings do
 * not count). One pass over the characters.
 *
 * @example
 * jsonTooDeep('[[1]]', 1) // true
 */
export function jsonTooDeep (text: string, max: number = MAX_JSON_DEPTH): boolean {
  // Each level takes an opening bracket: a text no longer than `max` cannot be deeper (most frames).
  if (text.length <= max) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return false
}

/** A JSON-object field (`data`, `parameters`, `result`): an object or null, else 400 (§1.3). */
export function jsonObjectOrNull (value: unknown): JsonObject | null | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(Messages.notJsonObject)
  checkJsonValue(value)
  return value as JsonObject
}

/** An optional 32-bit integer field (`lifetime`): null/absent, else a safe integer in `min..max`, else 400. */
export function optionalInteger (value: unknown, min: number, max: number): number | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) throw badRequest()
  return value
}

/** An optional string field: null/absent, else a string of at most `maxLength`, else 400. */
export function optionalString (value: unknown, maxLength: number): string | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string' || value.length > maxLength) throw badRequest()
  return value
}

/** Throws `Object is null` when a body that must be present is missing. */
export function requireBody<T> (body: T | undefined | null): T {
  if (body === undefined || body === null) throw badRequest(Messages.objectIsNull)
  return body
}
