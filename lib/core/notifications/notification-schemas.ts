/**
 * The wire shapes of notifications (spec §6.9-§6.13, auth spec §6.4): views and the insert body,
 * used by the REST routes (validation, serialisation, OpenAPI) and the WebSocket actions alike.
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'
import { JsonObjectInput, JsonObjectOrNull, Timestamp, TimestampInput } from '../schemas.js'

export const NotificationView = Type.Object({
  id: Type.Integer(),
  notification: Type.String(),
  deviceId: Type.String(),
  networkId: Type.Union([Type.Integer(), Type.Null()]),
  deviceTypeId: Type.Union([Type.Integer(), Type.Null()]),
  timestamp: Timestamp,
  parameters: JsonObjectOrNull
})
export type NotificationView = Static<typeof NotificationView>

/** What inserting a notification answers, exactly. */
export const NotificationInsertView = Type.Object({ id: Type.Integer(), timestamp: Timestamp })
export type NotificationInsertView = Static<typeof NotificationInsertView>

/** The body of `POST /device/{id}/notification` and the `notification` object of WebSocket `notification/insert`. */
export const NotificationInsertBody = Type.Object({
  notification: Type.String({ minLength: 1, maxLength: 128 }),
  timestamp: Type.Optional(TimestampInput),
  parameters: Type.Optional(JsonObjectInput)
})
export type NotificationInsertBody = Static<typeof NotificationInsertBody>
