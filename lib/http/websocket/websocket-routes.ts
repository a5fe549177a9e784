/**
 * The WebSocket endpoint on Fastify (auth spec §6.1): `@fastify/websocket` (the `ws` library) is
 * registered once per server and routes upgrades through Fastify's router, so any number of
 * WebSocket routes (the DeviceHive API at `<context>/websocket` and its `/websocket` alias, the
 * routes of an embedded devicehub plugin, the plugin proxy) share one `ws` server, one upgrade
 * listener, one inbound frame limit and one session registry per hub.
 */
import fastifyWebsocket from '@fastify/websocket'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { Principal } from '../../core/auth/principal.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { unauthorized } from '../../core/errors.js'
import { installErrorHandler } from '../error-handler.js'
import { installReadinessGate } from '../readiness-gate.js'
import type { OriginPolicy } from '../public-origin.js'
import { requestOrigin } from '../public-origin.js'
import type { ActionHandler } from './actions.js'
import { webSocketRegistry } from './registry.js'
import type { SessionLimits } from './session.js'
import { DEFAULT_SESSION_LIMITS, WebSocketSession } from './session.js'

export interface WebSocketOptions {
  /** Largest inbound frame in bytes; a larger one closes the connection with 1009 (default 1 MiB, like REST bodies). */
  maxPayload?: number
  /** Outbound bytes a session may have queued before it is cut off (default 512 KiB). */
  maxBufferedBytes?: number
  /** How long queued outbound data may stay unsent (default 10 s). */
  sendTimeoutMs?: number
  /** Ping interval (default 30 s); the first route installed for a hub sets it. */
  pingIntervalMs?: number
  /** A session that has not authenticated by then is closed with 1008 `Authentication timeout` (default 60 s). */
  authTimeoutMs?: number
  /** Subscriptions per connection; one more is refused with 429 (default 1,000). */
  maxSubscriptions?: number
  /** Frames received and not yet answered per connection; one more closes it with 1008 (default 1,000). */
  maxPendingFrames?: number
}

export const DEFAULT_MAX_PAYLOAD = 1024 * 1024

/**
 * Registers `@fastify/websocket` on `instance` unless a WebSocket server is already visible
 * there (registered by the host app or an enclosing devicehub context). Register it once per
 * Fastify server: each registration adds its own upgrade listener.
 *
 * @example
 * await ensureWebSocketSupport(app, { maxPayload: 64 * 1024 })
 */
export async function ensureWebSocketSupport (instance: FastifyInstance, options: WebSocketOptions = {}): Promise<void> {
  // The sessions' registry lives beside the WebSocket server, in the same context.
  webSocketRegistry(instance, options.pingIntervalMs)
  if (instance.hasDecorator('websocketServer')) return
  await instance.register(fastifyWebsocket, { options: { maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD } })
}

export interface WebSocketRouteOptions extends WebSocketOptions {
  hub: DeviceHub
  /** The REST base the clients of this endpoint use (for `server/info`'s `restServerUrl`). */
  basePath: string
  /** Extra actions served on this endpoint besides the DeviceHive catalogue. */
  actions?: Readonly<Record<string, ActionHandler>>
  /** Where `restServerUrl`'s origin comes from: a public URL, trusted proxy headers, else the connection. */
  origin?: OriginPolicy
}

// The principal of a bearer header on the upgrade, checked before the upgrade (401 refuses it),
// kept on the request for the handler.
const UPGRADE_AUTH = 'devicehubUpgradeAuth'
type UpgradeAuth = { principal: Principal, token: string } | null

function restServerUrl (request: FastifyRequest, basePath: string, origin: OriginPolicy = {}): string {
  return `${requestOrigin(request, origin, 'http')}${basePath}`
}

/**
 * Adds the DeviceHive WebSocket API at `path` of `instance` (which must see a WebSocket server,
 * see {@link ensureWebSocketSupport}).
 *
 * @example
 * await ensureWebSocketSupport(app)
 * installWebSocketRoute(app, '/websocket', { hub, basePath: '/api/rest' })
 */
export function installWebSocketRoute (instance: FastifyInstance, path: string, options: WebSocketRouteOptions): void {
  const { hub } = options
  const registry = webSocketRegistry(instance, options.pingIntervalMs)
  if (!instance.hasRequestDecorator(UPGRADE_AUTH)) instance.decorateRequest(UPGRADE_AUTH, null)
  const limits: SessionLimits = {
    maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_SESSION_LIMITS.maxBufferedBytes,
    sendTimeoutMs: options.sendTimeoutMs ?? DEFAULT_SESSION_LIMITS.sendTimeoutMs,
    // The WebSocket server may allow larger frames (for a larger plugin proxy limit): this route keeps its own.
    maxFrameBytes: options.maxPayload ?? DEFAULT_MAX_PAYLOAD,
    maxPendingFrames: options.maxPendingFrames ?? DEFAULT_SESSION_LIMITS.maxPendingFrames,
    maxSubscriptions: options.maxSubscriptions ?? DEFAULT_SESSION_LIMITS.maxSubscriptions,
    authTimeoutMs: options.authTimeoutMs ?? DEFAULT_SESSION_LIMITS.authTimeoutMs
  }
  instance.get(path, {
    websocket: true,
    schema: { hide: true },
    // §1.5: a bearer header on the handshake authenticates the session; a bad one refuses it.
    onRequest: async (request) => {
      const header = request.headers.authorization
      if (header === undefined) return
      if (header.length <= 6 || !header.startsWith('Bearer')) throw unauthorized()
      const token = header.slice(6).trim()
      if (token === '') throw unauthorized()
      // Under the REST base the REST auth hook has already resolved this header: not again.
      const principal = request.principal ?? await hub.tokens.authenticate(token)
      request.setDecorator<UpgradeAuth>(UPGRADE_AUTH, { principal, token })
    }
  }, (socket, request) => {
    const auth = request.getDecorator<UpgradeAuth>(UPGRADE_AUTH)
    // The session lives as long as its socket's listeners.
    new WebSocketSession(socket, {
      hub,
      registry,
      logger: request.log,
      restServerUrl: restServerUrl(request, options.basePath, options.origin),
      clientAddress: request.ip,
      limits,
      principal: auth?.principal,
      token: auth?.token,
      actions: options.actions
    })
  })
}

export interface DevicehubWebSocketPluginOptions extends WebSocketRouteOptions {
  /** Paths served under the plugin's prefix (default `['/websocket']`). */
  paths?: string[]
  /** How long an upgrade before the hub is initialised waits for it (default 10 s, then 503). */
  startupWaitMs?: number
}

/**
 * The WebSocket API as a Fastify plugin of its own, for an endpoint outside the REST prefix:
 * the standalone server mounts it at the context (`/api` for `/api/rest`) and at the root for
 * the `/websocket` alias; a host app that mounts `devicehubPlugin` under `/api/rest` can do the same.
 *
 * @example
 * await app.register(devicehubWebSocketPlugin, { hub, basePath: '/api/rest', prefix: '/api' })
 */
export const devicehubWebSocketPlugin: FastifyPluginAsync<DevicehubWebSocketPluginOptions> = async (instance, options) => {
  await ensureWebSocketSupport(instance, options)
  installErrorHandler(instance)
  installReadinessGate(instance, options.hub, options.startupWaitMs)
  const registry = webSocketRegistry(instance)
  instance.addHook('preClose', async () => registry.closeAll())
  for (const path of options.paths ?? ['/websocket']) installWebSocketRoute(instance, path, options)
}
