/** `GET /`, `/info`, `/info/cache`, `/info/config/cluster` (spec §3): public. */
import { Type } from 'typebox'
import type { DeviceHub } from '../../core/devicehub.js'
import { ApiInfo, CacheInfo, ClusterInfo } from '../../core/info/info-schemas.js'
import { errorResponses } from '../schemas.js'
import type { App } from '../types.js'
import type { OriginPolicy } from '../public-origin.js'
import { configureWebSocketUrl, webSocketServerUrl } from '../websocket-url.js'

export interface InfoRouteOptions {
  /** REST base path, used to derive the WebSocket URL's context (`/api/rest` -> `/api/websocket`). */
  basePath: string
  /** Overrides `webSocketServerUrl` (e.g. behind a proxy). */
  webSocketUrl?: string
  /** Overrides the plugin proxy URL that `POST /plugin` reports as `proxyEndpoint`. */
  pluginProxyUrl?: string
  /** A public URL, or trust in proxy headers, for the derived URLs (public-origin.ts). */
  origin?: OriginPolicy
}

const WELCOME = 'The DeviceHive RESTful API is now running, please refer to documentation to get the list of available resources.'

export function infoRoutes (app: App, hub: DeviceHub, options: InfoRouteOptions): void {
  configureWebSocketUrl(app, {
    basePath: options.basePath, override: options.webSocketUrl, pluginProxyOverride: options.pluginProxyUrl, origin: options.origin
  })

  app.get('/', {
    schema: { tags: ['info'], summary: 'Welcome text', response: { 200: Type.String(), ...errorResponses } }
  }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(WELCOME))

  app.get('/info', {
    schema: {
      tags: ['info'],
      summary: 'API version, server time and the WebSocket URL',
      response: {
        200: Type.Object({ ...ApiInfo.properties, webSocketServerUrl: Type.String() }),
        ...errorResponses
      }
    }
  }, async (request) => ({
    ...hub.info.info(),
    webSocketServerUrl: webSocketServerUrl(app, request)
  }))

  app.get('/info/cache', {
    schema: {
      tags: ['info'],
      summary: 'Cache statistics (informational)',
      response: { 200: CacheInfo, ...errorResponses }
    }
  }, async () => hub.info.cache())

  app.get('/info/config/cluster', {
    schema: {
      tags: ['info'],
      summary: 'Cluster connection strings (empty: devicehub needs no Kafka)',
      response: { 200: ClusterInfo, ...errorResponses }
    }
  }, async () => hub.info.cluster())
}
