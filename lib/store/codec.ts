/** Row codecs shared by the repositories: JSON text and 0/1 booleans. */
import type { JsonObject } from '../core/ports.js'
import { MAX_JSON_DEPTH, jsonTooDeep } from '../core/validation.js'

export function encodeJson (value: JsonObject | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value)
}

/**
 * Every stored value reads back (issue #16): text that is not a JSON object (written by an
 * older version or by hand) reads as null instead of failing every read of its row.
 */
export function decodeJson (text: string | null): JsonObject | null {
  if (text === null) return null
  // Deeper than any writer allows now: no reader (JSON.stringify included) would survive it.
  if (text.length > 2 * MAX_JSON_DEPTH && jsonTooDeep(text)) return null
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' ? value as JsonObject : null
  } catch {
    return null
  }
}

/** A stored 32-bit integer column read back as a safe integer or null (`lifetime` stored as Infinity by older versions). */
export function decodeNullableInt (value: number | null): number | null {
  if (value === null) return null
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : null
}

export function encodeBool (value: boolean): number {
  return value ? 1 : 0
}

export function decodeBool (value: number | boolean): boolean {
  return value === true || value === 1
}

/**
 * A LIKE pattern (escape character: backslash) matching values that contain `text`, with `%`,
 * `_` and backslash in the text taken literally (devicehub's `search`). Case is the query's business: it
 * lower-cases both sides with the database's own `lower()`, so a text always matches itself.
 *
 * @example
 * containsPattern('50%_Off') // '%50\\%\\_Off%'
 */
export function containsPattern (text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/** Escapes nothing: DeviceHive's `namePattern` is a raw SQL LIKE pattern (`%`, `_`). */
export function likePattern (pattern: string): string {
  return pattern
}
