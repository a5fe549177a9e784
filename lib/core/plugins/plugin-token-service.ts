/**
 * Plugin tokens (auth spec §2.4, §2.5): `POST /token/plugin/create` mints a pair for a topic the
 * caller owns; `GET /token/plugin/authenticate` lets plugin infrastructure check an access token.
 */
import { Action, expandActions, isKnownActionId } from '../auth/actions.js'
import type { TokenPair } from '../auth/auth-service.js'
import { TokenRejectedError, TokenType, isUserPayload } from '../auth/jwt.js'
import type { TokenPayload } from '../auth/jwt.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import type { ServiceContext } from '../context.js'
import { DeviceHubError, badRequest, forbidden, unauthorized } from '../errors.js'
import { formatTimestamp, parseTimestamp } from '../time.js'
import { UserRole, UserStatus } from '../users/user-ports.js'
import { readPluginReach, scopeWithin } from './plugin-grants.js'
import type { PluginRecord } from './plugin-ports.js'
import type { PluginTokenInfo, PluginTokenRequest } from './plugin-schemas.js'

export type { PluginTokenInfo, PluginTokenRequest } from './plugin-schemas.js'

export interface PluginTokenService {
  createToken(principal: Principal | undefined, request: PluginTokenRequest | undefined): Promise<TokenPair>
  authenticateToken(token: string | undefined): Promise<PluginTokenInfo>
}

const NO_TOPIC = 'No permisions or invalid topic name'

/**
 * @example
 * const tokens = createPluginTokenService(ctx)
 * const pair = await tokens.createToken(principal, { tpc: topicName, a: [16], e: '2030-01-01T00:00:00.000' })
 * await tokens.authenticateToken(pair.accessToken) // { a: [16], e: '2030-01-01T00:00:00.000', t: 1, tpc }
 */
export function createPluginTokenService (ctx: ServiceContext): PluginTokenService {
  const { store, clock, auth } = ctx
  return {
    async createToken (principal, request) {
      requireAction(principal, Action.ManagePlugin)
      if (principal.kind !== 'user') throw new DeviceHubError('CONFLICT', 'Can not get current user.')
      const user = principal.user
      const tpc = request?.tpc
      let ownerId: number | undefined
      let plugin: PluginRecord | undefined
      if (typeof tpc === 'string' && tpc !== '') {
        if (tpc === '*') ownerId = user.role === UserRole.Administrator ? user.id : undefined
        else {
          plugin = await store.plugins.findByTopic(tpc)
          ownerId = plugin?.userId
        }
      }
      if (ownerId === undefined || typeof tpc !== 'string') throw forbidden(NO_TOPIC)
      if (ownerId !== user.id) throw forbidden(`User with id ${ownerId} is not a plugin creator`)
      if (user.status !== UserStatus.Active) throw forbidden('User is locked or disabled')

      const a = parseActionIds(request?.a)
      // D1, D11: nobody, admins included, hands a plugin an action its own token does not hold,
      // nor a token for a plugin that reaches further than its own token does.
      for (const action of expandActions(a)) if (!principal.actions.has(action)) throw forbidden()
      if (plugin !== undefined && !scopeWithin(await readPluginReach(store, plugin, user), principal.scope)) throw forbidden()
      const e = parseTimestamp(request?.e)
      if (e === null) throw badRequest()
      return auth.issuePluginTokens(tpc, a, e)
    },

    async authenticateToken (token) {
      if (token === undefined || token.trim() === '') throw unauthorized('Token is empty')
      let payload: TokenPayload
      try {
        payload = auth.decode(token.trim())
      } catch (error) {
        if (error instanceof TokenRejectedError) throw unauthorized('Token is not valid')
        throw error
      }
      if (isUserPayload(payload)) throw unauthorized('Token is not valid')
      if (payload.t !== TokenType.Access) throw unauthorized('Invalid token type')
      if (payload.e < clock.now()) throw unauthorized('Token has expired')
      const plugin = payload.tpc === '' ? undefined : await store.plugins.findByTopic(payload.tpc)
      if (plugin === undefined) throw unauthorized('Plugin is not found')
      // A plugin of a locked or deleted user delivers nothing (REST refuses its tokens too).
      const owner = await store.users.findById(plugin.userId)
      if (owner === undefined || owner.status !== UserStatus.Active) throw unauthorized('Token is not valid')
      return { a: payload.a, e: formatTimestamp(payload.e), t: payload.t, tpc: payload.tpc }
    }
  }
}

/** `a`: null/absent or known action ids; anything else would mint an unusable token (400). */
function parseActionIds (value: unknown): number[] | null {
  if (value === undefined || value === null) return null
  if (!Array.isArray(value)) throw badRequest()
  for (const id of value) {
    if (typeof id !== 'number' || !Number.isInteger(id) || !isKnownActionId(id)) throw badRequest()
  }
  return [...new Set(value as number[])]
}
