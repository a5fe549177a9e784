/**
 * The wire shapes of commands (spec §2.6, §6.4-§6.6): the views and the request bodies, used by
 * the REST routes (validation, serialisation, OpenAPI) and the WebSocket actions alike.
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'
import { JsonObjectInput, JsonObjectOrNull, NullableInteger, NullableString, Timestamp, TimestampInput, nullableInput } from '../schemas.js'

/** The full command (nulls written out; `isUpdated` is never serialised). */
export const CommandView = Type.Object({
  id: Type.Integer(),
  command: Type.String(),
  timestamp: Timestamp,
  lastUpdated: Timestamp,
  userId: NullableInteger,
  deviceId: Type.String(),
  networkId: Type.Integer(),
  deviceTypeId: Type.Integer(),
  parameters: JsonObjectOrNull,
  lifetime: NullableInteger,
  status: NullableString,
  result: JsonObjectOrNull
})
export type CommandView = Static<typeof CommandView>

/** What inserting a command answers, exactly. */
export const CommandInsertView = Type.Object({
  id: Type.Integer(),
  timestamp: Timestamp,
  lastUpdated: Timestamp,
  userId: NullableInteger
})
export type CommandInsertView = Static<typeof CommandInsertView>

/**
 * `lifetime` and `status` as type arrays (`nullableInput`), not null-first unions: Ajv's coercion
 * read `lifetime: 0` and `status: ""` as null over REST while WebSocket kept them (issue #23).
 */
const Lifetime = nullableInput('integer', { minimum: 0, maximum: 2_147_483_647 })
const Status = nullableInput('string', { maxLength: 128 })

/** The body of `POST /device/{id}/command` and the `command` object of WebSocket `command/insert`. */
export const CommandInsertBody = Type.Object({
  command: Type.Optional(Type.String({ maxLength: 128 })),
  timestamp: Type.Optional(TimestampInput),
  parameters: Type.Optional(JsonObjectInput),
  lifetime: Type.Optional(Lifetime),
  status: Type.Optional(Status),
  result: Type.Optional(JsonObjectInput)
})
export type CommandInsertBody = Static<typeof CommandInsertBody>

/** The body of `PUT /device/{id}/command/{id}` and the `command` object of WebSocket `command/update`. */
export const CommandUpdateBody = Type.Object({
  status: Type.Optional(Status),
  result: Type.Optional(JsonObjectInput)
})
export type CommandUpdateBody = Static<typeof CommandUpdateBody>
