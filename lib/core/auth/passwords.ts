/**
 * Password hashing (D5). New hashes are scrypt with a random salt, stored as
 * `scrypt$N$r$p$<salt b64>$<hash b64>`. Legacy DeviceHive hashes (`sha256$<salt>$<hash>`,
 * hash = Base64(SHA-256(saltText + password))) still verify and are upgraded on login.
 * Every comparison is constant-time.
 */
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto'

const N = 16384
const R = 8
const P = 1
const KEY_LENGTH = 32

function scrypt (password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, KEY_LENGTH, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) => {
      if (err) reject(err)
      else resolve(key)
    })
  })
}

/** Hashes a password with scrypt. */
export async function hashPassword (password: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scrypt(password, salt, N, R, P)
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${hash.toString('base64')}`
}

/** Encodes a DeviceHive salt and hash pair (as imported from a DeviceHive database). */
export function legacyPasswordHash (salt: string, hash: string): string {
  return `sha256$${salt}$${hash}`
}

export interface PasswordCheck {
  ok: boolean
  /** True when the stored hash is in a legacy format and should be replaced after login. */
  needsUpgrade: boolean
}

/** Verifies a password against any stored format, in constant time. */
export async function verifyPassword (password: string, stored: string): Promise<PasswordCheck> {
  const parts = stored.split('$')
  if (parts[0] === 'scrypt' && parts.length === 6) {
    const [, n, r, p, salt, hash] = parts
    const expected = Buffer.from(hash!, 'base64')
    const actual = await scrypt(password, Buffer.from(salt!, 'base64'), Number(n), Number(r), Number(p))
    return { ok: safeEqual(actual, expected), needsUpgrade: Number(n) !== N || Number(r) !== R || Number(p) !== P }
  }
  if (parts[0] === 'sha256' && parts.length === 3) {
    const [, salt, hash] = parts
    const actual = createHash('sha256').update(salt + password, 'utf8').digest()
    return { ok: safeEqual(actual, Buffer.from(hash!, 'base64')), needsUpgrade: true }
  }
  return { ok: false, needsUpgrade: false }
}

function safeEqual (a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/** A random password for the bootstrap admin (D4): 18 bytes, URL-safe Base64 (24 chars). */
export function generatePassword (): string {
  return randomBytes(18).toString('base64url')
}

/** A random JWT secret (D3): 48 bytes of Base64, so the derived HMAC key has 288 bits. */
export function generateSecret (): string {
  return randomBytes(48).toString('base64')
}
