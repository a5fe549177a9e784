/**
 * `devicehub/fastify`: devicehub on Fastify. `buildServer()` builds the standalone app;
 * `devicehubPlugin` mounts the REST API (and its WebSocket endpoint) in a host app;
 * `devicehubWebSocketPlugin` serves the WebSocket API under another prefix. The WebSocket
 * session machinery behind them is internal.
 *
 * @example
 * import Fastify from 'fastify'
 * import { devicehubPlugin } from 'devicehub/fastify'
 * const app = Fastify()
 * await app.register(devicehubPlugin, { hub, prefix: '/api/rest' })
 */
export { buildServer } from './http/build-server.js'
export type { BuildServerOptions } from './http/build-server.js'
export type { MetricsOptions } from './http/metrics.js'
export { devicehubPlugin } from './http/plugin.js'
export type { DeviceHubPluginOptions } from './http/plugin.js'
export { devicehubWebSocketPlugin } from './http/websocket/websocket-routes.js'
export type { DevicehubWebSocketPluginOptions, WebSocketOptions, WebSocketRouteOptions } from './http/websocket/websocket-routes.js'
export type { PluginProxyOptions } from './http/plugin-proxy/route.js'
export type { OriginPolicy } from './http/public-origin.js'
