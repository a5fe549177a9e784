/**
 * The key login throttling counts a client address under. An IPv6 client usually holds a whole
 * /64 (and picks a new address in it at will), so IPv6 addresses count per /64; an IPv4 address
 * written as IPv6 (`::ffff:10.0.0.1`) counts as the IPv4 address. Whatever is not an IP address
 * (an embedder's own label) counts as itself, bounded in length.
 */
import { isIPv4, isIPv6 } from 'node:net'

/** Attempts whose address is unknown (an in-process caller gave none) share this key. */
export const UNKNOWN_ADDRESS = 'unknown'

const MAX_LABEL = 100

/**
 * @example
 * addressKey('2001:db8:1:2:3:4:5:6') // '2001:db8:1:2::/64'
 * addressKey('::ffff:192.0.2.7')     // '192.0.2.7'
 * addressKey(undefined)              // 'unknown'
 */
export function addressKey (address: string | undefined): string {
  if (address === undefined || address === '') return UNKNOWN_ADDRESS
  const bare = address.replace(/%.*$/, '')
  if (isIPv4(bare)) return bare
  if (!isIPv6(bare)) return `?${address.slice(0, MAX_LABEL)}`
  const groups = ipv6Groups(bare)
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6)
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail read). */
function ipv6Groups (address: string): number[] {
  let text = address
  const lastColon = text.lastIndexOf(':')
  if (text.includes('.', lastColon)) {
    // `::ffff:192.0.2.7` -> `::ffff:c000:207`
    const [a = 0, b = 0, c = 0, d = 0] = text.slice(lastColon + 1).split('.').map(Number)
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const parse = (part: string): number[] => part === '' ? [] : part.split(':').map((g) => parseInt(g, 16))
  const gap = text.indexOf('::')
  if (gap < 0) return parse(text)
  const left = parse(text.slice(0, gap))
  const right = parse(text.slice(gap + 2))
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
}
