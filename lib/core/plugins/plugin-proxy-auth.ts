/**
 * `plugin/authenticate` of the plugin proxy (contract §3.2, P2): the in-process check of a plugin
 * access token, with one specific message per failed check, in the contract's order.
 */
import { TokenRejectedError, TokenType, isUserPayload } from '../auth/jwt.js'
import type { PluginTokenPayload, TokenPayload } from '../auth/jwt.js'
import type { ServiceContext } from '../context.js'
import { UserStatus } from '../users/user-ports.js'
import type { PluginRecord } from './plugin-ports.js'

/** The proxy's failure texts (`p.m` of a failed reply), exact. */
export const ProxyMessages = {
  noToken: 'Payload should consist property "token" to authenticate plugin',
  invalidToken: 'Token is not valid',
  tokenType: 'Invalid token type',
  expired: 'Token has expired',
  notFound: 'Plugin is not found',
  ownerInactive: 'Unauthorized',
  noPermissions: 'Plugin has no permissions for this operation',
  notAuthorized: 'Plugin not authorized'
} as const

/** A refused proxy request: `message` is what the reply's `p.m` says. */
export class ProxyRefusal extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ProxyRefusal'
  }
}

export interface PluginAuthentication {
  plugin: PluginRecord
  payload: PluginTokenPayload
}

/**
 * Checks 1-6 of §3.2 (check 7, the connection's own binding, is the session's). The plugin's
 * status is not checked: CREATED and INACTIVE plugins authenticate.
 *
 * @example
 * const { plugin, payload } = await authenticatePluginToken(ctx, frame.p?.token)
 */
export async function authenticatePluginToken (
  ctx: Pick<ServiceContext, 'auth' | 'clock' | 'store'>, token: unknown
): Promise<PluginAuthentication> {
  if (typeof token !== 'string' || token === '') throw new ProxyRefusal(ProxyMessages.noToken)
  let payload: TokenPayload
  try {
    payload = ctx.auth.decode(token.trim())
  } catch (error) {
    if (error instanceof TokenRejectedError) throw new ProxyRefusal(ProxyMessages.invalidToken)
    throw error
  }
  if (isUserPayload(payload)) throw new ProxyRefusal(ProxyMessages.invalidToken)
  if (payload.t !== TokenType.Access) throw new ProxyRefusal(ProxyMessages.tokenType)
  if (payload.e < ctx.clock.now()) throw new ProxyRefusal(ProxyMessages.expired)
  const plugin = payload.tpc === '' || payload.tpc === '*' ? undefined : await ctx.store.plugins.findByTopic(payload.tpc)
  if (plugin === undefined) throw new ProxyRefusal(ProxyMessages.notFound)
  const owner = await ctx.store.users.findById(plugin.userId)
  if (owner === undefined || owner.status !== UserStatus.Active) throw new ProxyRefusal(ProxyMessages.ownerInactive)
  return { plugin, payload }
}
