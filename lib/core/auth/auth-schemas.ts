/**
 * The wire shapes of tokens (auth spec §2.1-§2.4): the token pair, what a refresh answers, and
 * the body of `POST /token/create`, used by the REST routes (validation, serialisation,
 * OpenAPI) and the WebSocket actions alike.
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'

/** What login, `/token/create` and `/token/plugin/create` answer. */
export const TokenPair = Type.Object({ accessToken: Type.String(), refreshToken: Type.String() })
export type TokenPair = Static<typeof TokenPair>

/** What `/token/refresh` answers. */
export const AccessTokenView = Type.Object({ accessToken: Type.String() })
export type AccessTokenView = Static<typeof AccessTokenView>

const IdList = Type.Union([Type.Array(Type.Union([Type.String(), Type.Integer()])), Type.Null()])
/** Items are checked by the service, with the contract's message; a single name is a list of one (R12). */
const ActionList = Type.Union([Type.Array(Type.Unknown()), Type.Null()])
const TimestampInput = Type.Union([Type.String(), Type.Integer(), Type.Null()])

/** The body of `POST /token/create` and the `payload` of WebSocket `token/create`. */
export const TokenCreateBody = Type.Object({
  userId: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  actions: Type.Optional(ActionList),
  networkIds: Type.Optional(IdList),
  deviceTypeIds: Type.Optional(IdList),
  expiration: Type.Optional(TimestampInput),
  refreshExpiration: Type.Optional(TimestampInput)
})
export type TokenCreateBody = Static<typeof TokenCreateBody>
