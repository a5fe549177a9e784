/**
 * DeviceHive JWTs (auth spec §1): HS256 only, header exactly `{"alg":"HS256"}`, one claim
 * `payload` holding the compact DeviceHive payload, key derived from the secret as jjwt does
 * wherever that ignores no part of the secret (jwt-key.ts).
 */
import { createSigner, createVerifier } from 'fast-jwt'
import { isKnownActionId } from './actions.js'
import type { JwtKeyDerivation } from './jwt-key.js'
import { deriveJwtKey } from './jwt-key.js'

export const TokenType = { Refresh: 0, Access: 1 } as const
export type TokenType = (typeof TokenType)[keyof typeof TokenType]

/** A user token payload: `u` set. */
export interface UserTokenPayload {
  u: number
  a: number[] | null
  n: string[] | null
  dt: string[] | null
  e: number
  t: TokenType
  /**
   * The user's token version at issue (an extension of DeviceHive's payload; absent = 0). A
   * change of role, status or password increments the stored version and so revokes the token.
   */
  v?: number
}

/** A plugin token payload: `tpc` set, no `u`. */
export interface PluginTokenPayload {
  tpc: string
  a: number[] | null
  e: number
  t: TokenType
}

export type TokenPayload = UserTokenPayload | PluginTokenPayload

export function isUserPayload (payload: TokenPayload): payload is UserTokenPayload {
  return 'u' in payload
}

/** Why a token was refused before any database lookup; each endpoint maps it to its text. */
export type TokenRejection = 'invalid' | 'type' | 'expired'

export class TokenRejectedError extends Error {
  constructor (readonly reason: TokenRejection) {
    super(`token rejected: ${reason}`)
    this.name = 'TokenRejectedError'
  }
}

export interface JwtCodec {
  /** Signs a payload; key order is kept, so DeviceHive's tokens reproduce byte for byte. */
  sign(payload: TokenPayload): string
  /** Verifies signature and shape. Throws {@link TokenRejectedError} `'invalid'`. */
  decode(token: string): TokenPayload
}

/**
 * @example
 * const jwt = createJwtCodec('devicehive')
 * const token = jwt.sign({ u: 1, a: [0], n: ['*'], dt: ['*'], e: Date.now() + 60_000, t: 1 })
 * jwt.decode(token).t // 1
 */
export function createJwtCodec (secret: string, derivation: JwtKeyDerivation = 'auto'): JwtCodec {
  const key = deriveJwtKey(secret, derivation)
  if (key.length === 0) throw new Error('The JWT secret yields an empty HMAC key: use a long random secret')
  const signer = createSigner({ key, algorithm: 'HS256', noTimestamp: true, header: { alg: 'HS256', typ: undefined } })
  const verifier = createVerifier({ key, algorithms: ['HS256'], cache: 1000 })
  // Every request presents the same few tokens: a verified token string maps to its frozen
  // payload without hashing it again (expiry is the caller's check on `e`, not fast-jwt's).
  const verified = new Map<string, TokenPayload>()
  return {
    sign (payload) {
      return signer({ payload })
    },
    decode (token) {
      const known = verified.get(token)
      if (known !== undefined) return known
      let claims: unknown
      try {
        claims = verifier(token)
      } catch {
        throw new TokenRejectedError('invalid')
      }
      const payload = parsePayload((claims as { payload?: unknown } | null)?.payload)
      if (payload === undefined) throw new TokenRejectedError('invalid')
      if (verified.size >= VERIFIED_CACHE_SIZE) verified.clear()
      verified.set(token, freezePayload(payload))
      return payload
    }
  }
}

const VERIFIED_CACHE_SIZE = 1000

function freezePayload (payload: TokenPayload): TokenPayload {
  if (payload.a !== null) Object.freeze(payload.a)
  if (isUserPayload(payload)) {
    if (payload.n !== null) Object.freeze(payload.n)
    if (payload.dt !== null) Object.freeze(payload.dt)
  }
  return Object.freeze(payload)
}

/** Checks the payload shape of §1.2 and normalises it; `undefined` when malformed. */
export function parsePayload (raw: unknown): TokenPayload | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined
  const p = raw as Record<string, unknown>
  const e = p.e
  const t = p.t
  if (typeof e !== 'number' || !Number.isSafeInteger(e)) return undefined
  if (t !== 0 && t !== 1) return undefined
  const a = parseActionIds(p.a)
  if (a === false) return undefined
  if (p.u !== undefined && p.u !== null) {
    const u = typeof p.u === 'string' && /^\d+$/.test(p.u) ? Number(p.u) : p.u
    if (typeof u !== 'number' || !Number.isSafeInteger(u) || u < 0) return undefined
    const n = parseIdList(p.n)
    const dt = parseIdList(p.dt)
    if (n === false || dt === false) return undefined
    if (p.v === undefined || p.v === null || p.v === 0) return { u, a, n, dt, e, t }
    if (typeof p.v !== 'number' || !Number.isSafeInteger(p.v) || p.v < 0) return undefined
    return { u, a, n, dt, e, t, v: p.v }
  }
  if (typeof p.tpc === 'string') return { tpc: p.tpc, a, e, t }
  return undefined
}

function parseActionIds (value: unknown): number[] | null | false {
  if (value === undefined || value === null) return null
  if (!Array.isArray(value)) return false
  for (const id of value) {
    // DeviceHive fails on an unknown id while mapping the claim: the token is refused.
    if (typeof id !== 'number' || !Number.isInteger(id) || !isKnownActionId(id)) return false
  }
  return value as number[]
}

function parseIdList (value: unknown): string[] | null | false {
  if (value === undefined || value === null) return null
  if (!Array.isArray(value)) return false
  const out: string[] = []
  for (const item of value) {
    if (item === '*') out.push('*')
    else if (typeof item === 'number' && Number.isSafeInteger(item)) out.push(String(item))
    else if (typeof item === 'string' && /^\d+$/.test(item)) out.push(item)
    else return false
  }
  return out
}
