/**
 * The HMAC key of the JWT secret (auth spec §1.4, issue #22).
 *
 * DeviceHive's derivation: jjwt 0.7 treats the secret as Base64 text and decodes it leniently:
 * characters outside the alphabet are dropped, complete 4-character groups decode to 3 bytes
 * (`=` shortens a group), and a trailing incomplete group is discarded. `Buffer.from(secret,
 * 'base64')` decodes that partial group and so yields a different key, which would make every
 * DeviceHive-minted token fail to verify.
 *
 * That derivation ignores part of some secrets: `devicehive` and `devicehivX` give the same key,
 * and so do `my-secret` and `my+secret`. So devicehub uses it only where it ignores nothing, for
 * a secret in canonical Base64 (what `openssl rand -base64 48` or `-hex 32` prints, and what
 * devicehub generates): the key is then exactly DeviceHive's. Any other secret is used as its
 * UTF-8 bytes (as most JWT libraries do), so every character counts. `devicehive` derivation
 * keeps DeviceHive's rule for every secret, to verify tokens DeviceHive minted with a secret
 * that is not canonical Base64 (its test suite's `devicehive`).
 */

/** `auto` (default): DeviceHive's key for canonical Base64, else the UTF-8 bytes. `devicehive`: always DeviceHive's. */
export type JwtKeyDerivation = 'auto' | 'devicehive'

/** Shorter HMAC keys get a warning at start: 256 bits, the size of the HS256 hash. */
export const MIN_JWT_KEY_BYTES = 32

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

/**
 * @example
 * deriveDeviceHiveKey('devicehive') // <Buffer 75 eb e2 71 e8 62>
 */
export function deriveDeviceHiveKey (secret: string): Buffer {
  const chars = [...secret].filter((c) => ALPHABET.includes(c) || c === '=')
  const bytes: number[] = []
  for (let i = 0; i + 4 <= chars.length; i += 4) {
    const group = chars.slice(i, i + 4)
    const padding = group.filter((c) => c === '=').length
    const values = group.map((c) => (c === '=' ? 0 : ALPHABET.indexOf(c)))
    const n = (values[0]! << 18) | (values[1]! << 12) | (values[2]! << 6) | values[3]!
    const decoded = [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]
    bytes.push(...decoded.slice(0, 3 - Math.min(padding, 2)))
  }
  return Buffer.from(bytes)
}

/**
 * True when DeviceHive's derivation reads every bit of `secret`: standard Base64, whole groups,
 * padding only at the end, and the bytes encode back to the same text (no ignored low bits).
 *
 * @example
 * isCanonicalBase64('QQ==') // true
 * isCanonicalBase64('QR==') // false: decodes to the same byte as QQ==
 * isCanonicalBase64('devicehive') // false: the trailing `ve` is ignored
 */
export function isCanonicalBase64 (secret: string): boolean {
  if (secret.length === 0 || secret.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(secret)) return false
  return Buffer.from(secret, 'base64').toString('base64') === secret
}

/**
 * The HMAC key of a JWT secret.
 *
 * @example
 * deriveJwtKey('c2VjcmV0LWtleS1tYXRlcmlhbA==') // DeviceHive's key: the decoded bytes
 * deriveJwtKey('a passphrase')                  // its UTF-8 bytes
 * deriveJwtKey('devicehive', 'devicehive')      // <Buffer 75 eb e2 71 e8 62>
 */
export function deriveJwtKey (secret: string, derivation: JwtKeyDerivation = 'auto'): Buffer {
  if (derivation === 'devicehive' || isCanonicalBase64(secret)) return deriveDeviceHiveKey(secret)
  return Buffer.from(secret, 'utf8')
}

/**
 * What is unsafe about a secret, for a loud warning at start; undefined when nothing is.
 *
 * @example
 * jwtKeyWarning('devicehive', 'devicehive') // 'The JWT secret gives only 6 bytes of HMAC key ...'
 */
export function jwtKeyWarning (secret: string, derivation: JwtKeyDerivation = 'auto'): string | undefined {
  const problems: string[] = []
  const key = deriveJwtKey(secret, derivation)
  if (key.length < MIN_JWT_KEY_BYTES) {
    problems.push(`The JWT secret gives only ${key.length} bytes of HMAC key (at least ${MIN_JWT_KEY_BYTES} are safe): ` +
      'whoever guesses it can sign tokens for any user.')
  }
  if (derivation === 'devicehive' && !isCanonicalBase64(secret)) {
    problems.push('DeviceHive\'s key derivation ignores part of this secret (characters outside Base64, a trailing partial group): ' +
      'other secrets sign the same tokens.')
  }
  if (problems.length === 0) return undefined
  return `${problems.join(' ')} Use a long random secret, e.g. \`openssl rand -base64 48\`.`
}
