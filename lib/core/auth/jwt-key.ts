/**
 * DeviceHive's HMAC key derivation (auth spec §1.4). jjwt 0.7 treats the secret as Base64
 * text and decodes it leniently: characters outside the alphabet are dropped, complete
 * 4-character groups decode to 3 bytes (`=` shortens a group), and a trailing incomplete group
 * is discarded. `Buffer.from(secret, 'base64')` decodes that partial group and so yields a
 * different key, which would make every DeviceHive-minted token fail to verify.
 *
 * @example
 * deriveDeviceHiveKey('devicehive') // <Buffer 75 eb e2 71 e8 62>
 */
export function deriveDeviceHiveKey (secret: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  const chars = [...secret].filter((c) => alphabet.includes(c) || c === '=')
  const bytes: number[] = []
  for (let i = 0; i + 4 <= chars.length; i += 4) {
    const group = chars.slice(i, i + 4)
    const padding = group.filter((c) => c === '=').length
    const values = group.map((c) => (c === '=' ? 0 : alphabet.indexOf(c)))
    const n = (values[0]! << 18) | (values[1]! << 12) | (values[2]! << 6) | values[3]!
    const decoded = [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]
    bytes.push(...decoded.slice(0, 3 - Math.min(padding, 2)))
  }
  return Buffer.from(bytes)
}
