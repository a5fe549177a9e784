/**
 * CONNECT authentication (as devicehive-mqtt, and more): a username and password log in like
 * `POST /token`; a password that is a JWT (any username) is an access token, as the
 * `authenticate` action takes it; neither is an anonymous session that authenticates later with
 * the `token` / `authenticate` actions. A refusal is a CONNACK return code, never an exception.
 */
import type { Principal } from '../core/auth/principal.js'
import type { DeviceHub } from '../core/devicehub.js'
import { isDeviceHubError } from '../core/errors.js'

/** MQTT 3.1.1 CONNACK return codes (§3.2.2.3). */
export const CONNACK = {
  identifierRejected: 2,
  serverUnavailable: 3,
  badUsernameOrPassword: 4,
  notAuthorized: 5
} as const

export type ConnectAuth =
  | { kind: 'anonymous' }
  | { kind: 'authenticated', principal: Principal, token: string }
  | { kind: 'refused', returnCode: number, message: string }

// Three base64url parts: what a JWT looks like, and what no sensible password does.
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/

async function withToken (hub: DeviceHub, token: string): Promise<ConnectAuth> {
  const result = await hub.tokens.verifyAccessToken(token)
  if ('failure' in result) {
    return {
      kind: 'refused', returnCode: CONNACK.notAuthorized, message: result.failure === 'expired' ? 'Token expired' : 'Invalid credentials'
    }
  }
  await hub.tokens.noteSessionLogin(result.principal)
  return { kind: 'authenticated', principal: result.principal, token }
}

/**
 * Who a CONNECT authenticates, from its username and password.
 *
 * @example
 * await connectAuth(hub, 'dhadmin', Buffer.from('secret'), '10.0.0.7') // { kind: 'authenticated', ... }
 * await connectAuth(hub, undefined, undefined, '10.0.0.7')             // { kind: 'anonymous' }
 */
export async function connectAuth (
  hub: DeviceHub, username: string | undefined, password: Buffer | undefined, address: string | undefined
): Promise<ConnectAuth> {
  const secret = password?.toString('utf8')
  if ((username === undefined || username === '') && (secret === undefined || secret === '')) return { kind: 'anonymous' }
  if (secret === undefined || secret === '') {
    return {
      kind: 'refused', returnCode: CONNACK.badUsernameOrPassword,
      message: 'A username needs a password (or an access token as the password)'
    }
  }
  try {
    if (JWT_SHAPE.test(secret)) return await withToken(hub, secret)
    const { accessToken } = await hub.tokens.login(username, secret, { address })
    return await withToken(hub, accessToken)
  } catch (error) {
    if (isDeviceHubError(error)) {
      const returnCode = error.code === 'TOO_MANY_REQUESTS' || error.code === 'UNAVAILABLE'
        ? CONNACK.serverUnavailable
        : CONNACK.badUsernameOrPassword
      return { kind: 'refused', returnCode, message: error.message }
    }
    throw error
  }
}

/**
 * Who holds a session, as a comparable key.
 *
 * @example
 * ownerOf(undefined) // 'anonymous'
 */
export function ownerOf (principal: Principal | undefined): string {
  if (principal === undefined) return 'anonymous'
  if (principal.kind === 'user') return `user:${principal.user.id}`
  if (principal.kind === 'plugin') return `plugin:${principal.plugin.id}`
  return 'system'
}
