/**
 * The wire shapes of users (spec §2.5, §5.8-§5.10): the views, the user <-> network and
 * user <-> device-type link views, and the body of create and update, used by the REST routes
 * (validation, serialisation, OpenAPI) and the WebSocket actions alike.
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'
import { NamedEntityView } from '../networks/network-schemas.js'
import type { Unchecked } from '../schemas.js'
import { JsonObjectInput, JsonObjectOrNull, NullableTimestamp, nullableInput } from '../schemas.js'

/** A user as `GET /user` lists it (never the password hash or login counters). */
export const UserListView = Type.Object({
  id: Type.Integer(),
  login: Type.String(),
  role: Type.Integer(),
  status: Type.Integer(),
  lastLogin: NullableTimestamp,
  data: JsonObjectOrNull,
  introReviewed: Type.Boolean(),
  allDeviceTypesAvailable: Type.Boolean()
})
export type UserListView = Static<typeof UserListView>

/** A user read by id (or the caller), with its networks. */
export const UserView = Type.Object({ ...UserListView.properties, networks: Type.Array(NamedEntityView) })
export type UserView = Static<typeof UserView>

/** What creating a user answers, exactly. */
export const UserCreatedView = Type.Object({
  id: Type.Integer(),
  lastLogin: NullableTimestamp,
  data: JsonObjectOrNull,
  introReviewed: Type.Boolean(),
  allDeviceTypesAvailable: Type.Boolean()
})
export type UserCreatedView = Static<typeof UserCreatedView>

/** A network assigned to a user (`GET /user/{id}/network/{networkId}`). */
export const UserNetworkView = Type.Object({ network: NamedEntityView })
export type UserNetworkView = Static<typeof UserNetworkView>

/** A device type available to a user (`GET /user/{id}/devicetype/{deviceTypeId}`). */
export const UserDeviceTypeView = Type.Object({ deviceType: NamedEntityView })
export type UserDeviceTypeView = Static<typeof UserDeviceTypeView>

const NullableIntegerInput = nullableInput('integer')
const NullableBooleanInput = nullableInput('boolean')

/** The body of `POST /user`, `PUT /user/{id}`, `PUT /user/current` and the `user` of the WebSocket actions. */
export const UserBody = Type.Object({
  login: Type.Optional(nullableInput('string')),
  password: Type.Optional(nullableInput('string')),
  role: Type.Optional(NullableIntegerInput),
  status: Type.Optional(NullableIntegerInput),
  data: Type.Optional(JsonObjectInput),
  introReviewed: Type.Optional(NullableBooleanInput),
  allDeviceTypesAvailable: Type.Optional(NullableBooleanInput)
})
/** What the service takes: the body's fields, unchecked (it validates them). */
export type UserBody = Unchecked<Static<typeof UserBody>>
