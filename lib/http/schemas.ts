/** TypeBox schemas shared by several route files. */
import { Type } from 'typebox'

export const ErrorBody = Type.Object({
  error: Type.Integer(),
  message: Type.String()
}, { $id: 'ErrorBody', description: 'Every error: the HTTP status and the contract\'s message' })

/** The error responses every route documents. */
export const errorResponses = {
  '4xx': ErrorBody,
  '5xx': ErrorBody
}

// The primitives live in the core, with the wire shapes built from them.
export { JsonObjectInput, JsonObjectOrNull, NullableString, NullableTimestamp, Timestamp, TimestampInput } from '../core/schemas.js'

export const Count = Type.Object({ count: Type.Integer() })

export const IntegerId = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })

/**
 * A numeric id in the path. Like DeviceHive's `Long` path parameters: any integer reaches the
 * service (which answers 403 or 404 for it), anything that is not one answers 404
 * `HTTP 404 Not Found` (error-handler.ts), as a JAX-RS conversion failure does.
 */
export const PathId = Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })

/** A filter on a 32-bit integer column (role, status): out of range is a 400, never a SQL error. */
export const Int32 = Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 })

/** Sorting and paging of the list endpoints (spec §1.7); the service applies the rules and messages. */
export const ListPaging = {
  sortField: Type.Optional(Type.String()),
  sortOrder: Type.Optional(Type.String()),
  take: Type.Optional(Type.Integer()),
  skip: Type.Optional(Type.Integer())
}

/** Sorting and paging of the command and notification queries (spec §6.2, §6.9). */
export const MessagePaging = {
  sortField: Type.Optional(Type.String()),
  sortOrder: Type.Optional(Type.String()),
  take: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  skip: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }))
}
