/**
 * The wire shapes of networks and device types (spec §2.3, §2.4, §5.6, §5.7), one set for
 * both (named entities): the views and the body of create and update, used by the REST routes
 * (validation, serialisation, OpenAPI) and the WebSocket actions alike.
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'
import type { Unchecked } from '../schemas.js'
import { JsonObjectOrNull, NullableString, nullableInput } from '../schemas.js'

/** A network or device type, as lists answer it and users embed it. */
export const NamedEntityView = Type.Object({ id: Type.Integer(), name: Type.String(), description: NullableString })
export type NamedEntityView = Static<typeof NamedEntityView>

/** A device inside a network or device type (§2.1): no networkId / deviceTypeId. */
export const EmbeddedDeviceView = Type.Object({ id: Type.String(), name: Type.String(), data: JsonObjectOrNull, isBlocked: Type.Boolean() })
export type EmbeddedDeviceView = Static<typeof EmbeddedDeviceView>

/** A network or device type read by id, with its devices. */
export const NamedEntityWithDevices = Type.Object({ ...NamedEntityView.properties, devices: Type.Array(EmbeddedDeviceView) })
export type NamedEntityWithDevices = Static<typeof NamedEntityWithDevices>

/** The body of create and update, and the `network` / `deviceType` of the WebSocket insert and update. */
export const NamedEntityBody = Type.Object({
  name: Type.Optional(nullableInput('string')),
  description: Type.Optional(nullableInput('string'))
})
/** What the service takes: the body's fields, unchecked (it validates them). */
export type NamedEntityBody = Unchecked<Static<typeof NamedEntityBody>>
