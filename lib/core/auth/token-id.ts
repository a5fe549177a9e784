/**
 * The identity of one access token, for the one revocation that spares a token: a password
 * change revokes every token of the user but the one that made it (D11). HS256 signing is
 * deterministic and the payload carries the expiry in milliseconds, so the verified payload
 * names the token; its digest is what the user row keeps (`users.kept_token`) and what a
 * password-change `revoke` doorbell carries, so open waits of that token go on everywhere.
 */
import { createHash } from 'node:crypto'
import type { UserTokenPayload } from './jwt.js'

// A memo cache: a verified payload is immutable, so its id is too.
const ids = new WeakMap<UserTokenPayload, string>()

/**
 * A short digest (128 bits, base64url) of a verified user token payload. Payloads are frozen
 * and shared per token string (jwt.ts), so the digest is computed once per token.
 *
 * @example
 * tokenId({ u: 5, a: [0], n: ['*'], dt: ['*'], e: 1764150000000, t: 1 }) // 'q0V...' (22 characters)
 */
export function tokenId (payload: UserTokenPayload): string {
  let id = ids.get(payload)
  if (id === undefined) {
    const canonical = JSON.stringify([payload.u, payload.a, payload.n, payload.dt, payload.e, payload.t, payload.v ?? 0])
    id = createHash('sha256').update(canonical).digest('base64url').slice(0, 22)
    ids.set(payload, id)
  }
  return id
}
