/**
 * The primitive wire schemas the core's shapes are built from (TypeBox: one object for the type,
 * validation, serialisation and the OpenAPI document). The HTTP adapter re-exports them.
 */
import { Type } from 'typebox'
import type { JsonObject } from './ports.js'

export const Timestamp = Type.String({ description: 'UTC, yyyy-MM-ddTHH:mm:ss.SSS, no zone' })
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
export const NullableString = Type.Union([Type.String(), Type.Null()])
export const NullableInteger = Type.Union([Type.Integer(), Type.Null()])

/** A JSON object or null, serialised as received (key order kept): an open schema, typed for the core. */
export const JsonObjectOrNull = Type.Unsafe<JsonObject | null>({ description: 'JSON object or null' })

/** Accepts anything on input; the service checks it is an object or null with the contract's message. */
export const JsonObjectInput = Type.Unknown({ description: 'JSON object or null' })

/** A timestamp on input: any form of the contract, or null. Null first: Ajv coerces types, and would turn a null into "" or 0. */
export const TimestampInput = Type.Union([Type.Null(), Type.String(), Type.Integer()])

/**
 * A nullable body field as one `type` array, not a union: Ajv's type coercion would turn a
 * null into "" / 0 / false in the first branch of an `anyOf`, but leaves a value alone when
 * its type is one of the listed ones.
 *
 * @example
 * nullableInput('integer', { minimum: 0 }) // { type: ['integer', 'null'], minimum: 0 }
 */
export function nullableInput<T extends 'string' | 'integer' | 'boolean'> (type: T, extra: Record<string, unknown> = {}) {
  return Type.Unsafe<(T extends 'string' ? string : T extends 'integer' ? number : boolean) | null>({ type: [type, 'null'], ...extra })
}

/**
 * A body as a core service takes it: the fields of its schema, each unchecked. The service
 * checks every value with the contract's messages, because WebSocket frames reach it without
 * the REST schema's validation.
 */
export type Unchecked<T> = Partial<Record<keyof T, unknown>>
