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
