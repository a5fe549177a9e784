/**
 * The wire shapes of plugins (auth spec §2.4, §2.5, §2.7): the plugin view, what registering
 * a plugin answers, the plugin token payloads, and the bodies of `POST /plugin` and
 * `POST /token/plugin/create`, used by the REST routes (validation, serialisation, OpenAPI).
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'
import type { Unchecked } from '../schemas.js'
import { JsonObjectInput, JsonObjectOrNull, NullableString, Timestamp } from '../schemas.js'

export const PluginStatusName = Type.Union([Type.Literal('ACTIVE'), Type.Literal('INACTIVE'), Type.Literal('CREATED')])
export type PluginStatusName = Static<typeof PluginStatusName>

/** The plugin view of `GET /plugin`. */
export const PluginView = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: NullableString,
  topicName: Type.String(),
  filter: Type.String(),
  status: PluginStatusName,
  subscriptionId: Type.Union([Type.Integer(), Type.Null()]),
  userId: Type.Integer(),
  parameters: JsonObjectOrNull
})
export type PluginView = Static<typeof PluginView>

/** The body of `POST /plugin` (the subscription filter travels in the query string). */
export const PluginCreateBody = Type.Object({
  name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  description: Type.Optional(NullableString),
  parameters: Type.Optional(JsonObjectInput)
})
/** What the service takes: the body's fields, unchecked (it validates them). */
export type PluginCreateBody = Unchecked<Static<typeof PluginCreateBody>>

/** What `POST /plugin` answers: the plugin's tokens, where to connect, and its topic. */
export const PluginRegistration = Type.Object({
  accessToken: Type.String(),
  refreshToken: Type.String(),
  proxyEndpoint: Type.String(),
  topicName: Type.String()
})
export type PluginRegistration = Static<typeof PluginRegistration>

/**
 * What `POST /token/plugin/create` answers: the token pair and, beyond DeviceHive (which
 * answers the pair only), where the plugin connects with it, as `POST /plugin` reports it.
 */
export const PluginTokenPair = Type.Object({
  accessToken: Type.String(),
  refreshToken: Type.String(),
  proxyEndpoint: Type.String()
})
export type PluginTokenPair = Static<typeof PluginTokenPair>

/** What `/token/plugin/authenticate` answers: the payload in compact keys, `e` as a DeviceHive timestamp. */
export const PluginTokenInfo = Type.Object({
  a: Type.Union([Type.Array(Type.Integer()), Type.Null()]),
  e: Timestamp,
  t: Type.Integer(),
  tpc: Type.String()
})
export type PluginTokenInfo = Static<typeof PluginTokenInfo>

/** A plugin payload in compact keys, as posted to `/token/plugin/create` (the authenticate answer posts back unchanged). */
export const PluginTokenRequest = Type.Object({
  tpc: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  a: Type.Optional(Type.Union([Type.Array(Type.Integer()), Type.Null()])),
  e: Type.Optional(Type.Union([Type.String(), Type.Integer(), Type.Null()])),
  t: Type.Optional(Type.Unknown())
})
/** What the service takes: the payload's fields, unchecked (it validates them). */
export type PluginTokenRequest = Unchecked<Static<typeof PluginTokenRequest>>
