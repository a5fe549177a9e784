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

export const Timestamp = Type.String({ description: 'UTC, yyyy-MM-ddTHH:mm:ss.SSS, no zone' })
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
export const NullableString = Type.Union([Type.String(), Type.Null()])
/** A JSON object or null, serialised as received (key order kept). */
export const JsonObjectOrNull = Type.Unknown({ description: 'JSON object or null' })

/** Accepts anything on input; the service checks it is an object or null with the contract's message. */
export const JsonObjectInput = Type.Unknown({ description: 'JSON object or null' })

export const Count = Type.Object({ count: Type.Integer() })

export const IntegerId = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })

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
