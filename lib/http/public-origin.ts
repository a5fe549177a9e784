/**
 * The origin (`scheme://host:port`) this server tells clients to use: in `/info`'s
 * `webSocketServerUrl`, the `proxyEndpoint` of plugin registration and the WebSocket
 * `server/info`'s `restServerUrl` (issue #22). Request headers are the client's to choose, so
 * they are used only behind a proxy the operator trusts:
 *
 * 1. a configured public URL (`--public-url`) wins;
 * 2. with `trustProxy`, the request's `X-Forwarded-Proto` / `X-Forwarded-Host` (from a trusted
 *    peer, as Fastify decides) or else its `Host`, when it looks like a host name;
 * 3. otherwise the address and port the client's connection reached on this server, which a
 *    client on another machine can reach too (listening on 0.0.0.0 included).
 */
import type { FastifyRequest } from 'fastify'

export interface OriginPolicy {
  /** The public origin, e.g. `https://iot.example.com` (see {@link parsePublicUrl}). */
  publicUrl?: string
  /** Headers name the origin (the operator's `trustProxy`): only behind a trusted proxy. */
  trustProxy?: boolean
}

// A host name or address with an optional port: nothing that could add a path, a query or credentials.
const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

/**
 * Checks a configured public URL and returns its origin; throws a clear message otherwise.
 *
 * @example
 * parsePublicUrl('https://iot.example.com/') // 'https://iot.example.com'
 * parsePublicUrl('ftp://x')                  // throws
 */
export function parsePublicUrl (value: string): string {
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    throw new Error(`The public URL must be an http(s) origin such as https://iot.example.com:8443, not '${value}'`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' ||
    (url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw new Error(`The public URL must be an http(s) origin such as https://iot.example.com:8443, not '${value}'`)
  }
  return url.origin
}

/**
 * The policy from the options a server or plugin is given: the public URL checked, the proxy
 * headers used only when a proxy is trusted (any truthy `trustProxy`, addresses included).
 *
 * @example
 * originPolicy(undefined, false) // { publicUrl: undefined, trustProxy: false }
 */
export function originPolicy (publicUrl: string | undefined, trustProxy: unknown): OriginPolicy {
  return { publicUrl: publicUrl === undefined ? undefined : parsePublicUrl(publicUrl), trustProxy: Boolean(trustProxy) }
}

/** `host:port` of the connection's local end (IPv6 in brackets, an IPv4-mapped address as IPv4). */
function localAuthority (request: FastifyRequest): string | undefined {
  const { localAddress, localPort } = request.raw.socket ?? {}
  if (localAddress === undefined || localPort === undefined) return undefined
  const address = localAddress.startsWith('::ffff:') && localAddress.includes('.') ? localAddress.slice(7) : localAddress
  return address.includes(':') ? `[${address.replace(/%/g, '%25')}]:${localPort}` : `${address}:${localPort}`
}

/**
 * The origin for a client of `request`, as `http[s]://…` or, with `kind` `ws`, `ws[s]://…`.
 *
 * @example
 * requestOrigin(request, {}, 'ws')                                       // 'ws://192.168.1.10:8080'
 * requestOrigin(request, { publicUrl: 'https://iot.example.com' }, 'ws') // 'wss://iot.example.com'
 */
export function requestOrigin (request: FastifyRequest, policy: OriginPolicy, kind: 'http' | 'ws'): string {
  let secure: boolean
  let authority: string
  if (policy.publicUrl !== undefined) {
    const url = new URL(policy.publicUrl)
    secure = url.protocol === 'https:'
    authority = url.host
  } else {
    const trustedHost = policy.trustProxy === true && HOST.test(request.host) ? request.host : undefined
    const socket = request.raw.socket as { encrypted?: boolean } | undefined
    secure = policy.trustProxy === true ? request.protocol === 'https' : socket?.encrypted === true
    authority = trustedHost ?? localAuthority(request) ?? 'localhost'
  }
  const scheme = kind === 'ws' ? (secure ? 'wss' : 'ws') : (secure ? 'https' : 'http')
  return `${scheme}://${authority}`
}
