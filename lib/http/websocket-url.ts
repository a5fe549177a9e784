/**
 * This server's own WebSocket URL (auth spec §0, D8): `ws[s]://<host><context>/websocket`,
 * where the context is the REST base without its trailing `/rest`. `/info` reports it as
 * `webSocketServerUrl`. Plugin registration reports the plugin proxy beside it as `proxyEndpoint`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { OriginPolicy } from './public-origin.js'
import { requestOrigin } from './public-origin.js'

interface WebSocketUrlSettings {
  basePath: string
  override?: string
  /** Fixed `proxyEndpoint` (plugin proxy contract P1; DeviceHive: DH_PROXY_PLUGIN_CONNECT). */
  pluginProxyOverride?: string
  /** Where the origin comes from (public-origin.ts): a public URL, trusted proxy headers, or the connection. */
  origin?: OriginPolicy
}

// A decorator of the encapsulated devicehub instance, so route modules that only receive `app`
// report the same URL as `/info`, including a configured override.
const DECORATOR = 'devicehubWebSocketUrl'

/** Records the REST base and the optional fixed URL for the routes of `app` (once per instance). */
export function configureWebSocketUrl (app: FastifyInstance, settings: WebSocketUrlSettings): void {
  app.decorate(DECORATOR, settings)
}

function settingsOf (app: FastifyInstance): WebSocketUrlSettings {
  return app.hasDecorator(DECORATOR) ? app.getDecorator<WebSocketUrlSettings>(DECORATOR) : { basePath: app.prefix }
}

/**
 * The WebSocket URL as seen by the client of `request`.
 *
 * @example
 * configureWebSocketUrl(app, { basePath: '/api/rest' })
 * webSocketServerUrl(app, request) // 'ws://example.org:8080/api/websocket'
 */
export function webSocketServerUrl (app: FastifyInstance, request: FastifyRequest): string {
  const settings = settingsOf(app)
  if (settings.override !== undefined) return settings.override
  return `${requestOrigin(request, settings.origin ?? {}, 'ws')}${contextPath(settings.basePath)}/websocket`
}

/**
 * The plugin proxy URL that `POST /plugin` reports as `proxyEndpoint` (plugin proxy contract
 * P1): `ws[s]://<host><context>/plugin/proxy`, derived exactly like the WebSocket URL.
 *
 * @example
 * pluginProxyUrl(app, request) // 'ws://example.org:8080/api/plugin/proxy'
 */
export function pluginProxyUrl (app: FastifyInstance, request: FastifyRequest): string {
  const settings = settingsOf(app)
  if (settings.pluginProxyOverride !== undefined) return settings.pluginProxyOverride
  return `${requestOrigin(request, settings.origin ?? {}, 'ws')}${contextPath(settings.basePath)}/plugin/proxy`
}

/**
 * The context path of a REST base: the base without its trailing `/rest`.
 *
 * @example
 * contextPath('/api/rest') // '/api'
 */
export function contextPath (basePath: string): string {
  return basePath.replace(/\/rest\/?$/, '')
}
