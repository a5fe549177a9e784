/**
 * The wire shapes of devices (spec §2.2, §5.1-§5.5): the views and the body of a registration,
 * used by the REST routes (validation, serialisation, OpenAPI) and the WebSocket actions alike.
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'
import type { Unchecked } from '../schemas.js'
import { JsonObjectInput, JsonObjectOrNull, nullableInput } from '../schemas.js'

/** The stored fields of a device, as `$device-add` / `$device-update` carry them. */
export const DeviceFields = Type.Object({
  id: Type.String(),
  name: Type.String(),
  data: JsonObjectOrNull,
  networkId: Type.Integer(),
  deviceTypeId: Type.Integer(),
  isBlocked: Type.Boolean()
})
export type DeviceFields = Static<typeof DeviceFields>

/** A device as `GET /device` answers it: the stored fields plus presence (extra fields DeviceHive clients ignore). */
export const DeviceView = Type.Object({
  ...DeviceFields.properties,
  /** Last device-authored activity (a timestamp string), or null when never seen. */
  lastSeen: Type.Union([Type.String(), Type.Null()]),
  online: Type.Boolean()
})
export type DeviceView = Static<typeof DeviceView>

const NullableId = nullableInput('integer', { minimum: 0, maximum: Number.MAX_SAFE_INTEGER })

/** The body of `PUT /device/{id}` and the `device` of WebSocket `device/save`. */
export const DeviceBody = Type.Object({
  name: Type.Optional(nullableInput('string')),
  data: Type.Optional(JsonObjectInput),
  networkId: Type.Optional(NullableId),
  deviceTypeId: Type.Optional(NullableId),
  isBlocked: Type.Optional(nullableInput('boolean'))
})
/** What the service takes: the body's fields, unchecked (it validates them). */
export type DeviceBody = Unchecked<Static<typeof DeviceBody>>
