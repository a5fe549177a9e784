/** Row codecs shared by the repositories: JSON text and 0/1 booleans. */
import type { JsonObject } from '../core/ports.js'

export function encodeJson (value: JsonObject | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value)
}

export function decodeJson (text: string | null): JsonObject | null {
  return text === null ? null : JSON.parse(text) as JsonObject
}

export function encodeBool (value: boolean): number {
  return value ? 1 : 0
}

export function decodeBool (value: number | boolean): boolean {
  return value === true || value === 1
}

/** Escapes nothing: DeviceHive's `namePattern` is a raw SQL LIKE pattern (`%`, `_`). */
export function likePattern (pattern: string): string {
  return pattern
}
