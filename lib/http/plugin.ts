/**
 * devicehub as a Fastify plugin: mount it in a host app under any prefix (the REST base). The
 * REST surface is encapsulated there: its hooks (auth, CORS), error handler, JSON parser and
 * 404/405 handler apply to its own routes only. The WebSocket endpoints live beside the REST base
 * under its context path (`/api/rest` -> `/api/plugin/proxy`), so the plugin itself runs in the
 * host's context and registers both parts as encapsulated children.
 */
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { DeviceHub } from '../core/devicehub.js'
import { installAuthHook } from './auth-hook.js'
import { installJsonParser } from './content-types.js'
import { installCors } from './cors.js'
import { redirectToTrailingSlash } from './docs-redirect.js'
import { installErrorHandler } from './error-handler.js'
import { installNotFoundHandler } from './method-not-allowed.js'
import { installReadinessGate } from './readiness-gate.js'
import { healthRoutes } from './routes/health.js'
import { infoRoutes } from './routes/info.js'
import { routeModules } from './routes/index.js'
import { ErrorBody } from './schemas.js'
import type { App } from './types.js'
import { installSerializer, installValidator } from './validation.js'
import type { PluginProxyOptions } from './plugin-proxy/route.js'
import { pluginProxyRoute } from './plugin-proxy/route.js'
import { contextPath } from './websocket-url.js'
import { originPolicy } from './public-origin.js'
import type { WebSocketOptions } from './websocket/websocket-routes.js'
import { DEFAULT_MAX_PAYLOAD, ensureWebSocketSupport, installWebSocketRoute } from './websocket/websocket-routes.js'
import { webSocketRegistry } from './websocket/registry.js'

export interface DeviceHubPluginOptions {
  hub: DeviceHub
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number
  /** Overrides the `webSocketServerUrl` that `/info` reports. */
  webSocketUrl?: string
  /** The plugin proxy at `<context>/plugin/proxy`: its limits and a fixed `proxyEndpoint` URL. */
  pluginProxy?: PluginProxyOptions
  /**
   * The WebSocket API at `{prefix}/websocket` (limits, or `false` for none). When the prefix ends
   * in `/rest`, `/info` reports `<context>/websocket` (the prefix without `/rest`): serve that
   * path too with `devicehubWebSocketPlugin` (the standalone server does).
   */
  webSocket?: WebSocketOptions | false
  /** Serve Swagger UI at `{prefix}/docs` (default true). */
  docs?: boolean
  /**
   * How long a request that arrives before `hub.initialise()` finished waits for it before it
   * gets 503 with `Retry-After` (default 10 s; see readiness-gate.ts).
   */
  startupWaitMs?: number
  /**
   * The public origin clients use (e.g. `https://iot.example.com`): `/info`'s WebSocket URL, the
   * plugin proxy URL and `restServerUrl` start with it. Without it they name the address and port
   * the client's connection reached, or, with `trustProxy`, what the proxy's headers say.
   */
  publicUrl?: string
  /**
   * The host app sits behind a proxy it trusts (its Fastify `trustProxy`): derive those URLs from
   * `X-Forwarded-Proto`, `X-Forwarded-Host` and `Host`. Default false: headers are not used.
   */
  trustProxy?: boolean
}

/** The REST surface, encapsulated under the REST base. */
const restPlugin: FastifyPluginAsync<DeviceHubPluginOptions> = async (instance, options) => {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>() as unknown as App
  const { hub } = options
  const basePath = instance.prefix
  installJsonParser(instance, options.bodyLimit ?? 1024 * 1024)
  installValidator(instance)
  installSerializer(instance)
  installErrorHandler(instance)
  installNotFoundHandler(instance)
  installCors(instance)
  installReadinessGate(instance, hub, options.startupWaitMs)
  installAuthHook(instance, hub)
  // Pending long polls answer `[]` before the server stops, so close never waits on them.
  instance.addHook('preClose', async () => hub.releaseWaiters())
  // One warning per login and window when many addresses fail it (never the password).
  const stopWatching = hub.tokens.watchGuessing(({ login, addresses, failures, windowMs }) => {
    const fields = { login, addresses, failures, windowMinutes: windowMs / 60_000 }
    instance.log.warn(fields, 'distributed login guessing: one login failed from many addresses')
  })
  instance.addHook('onClose', async () => stopWatching())

  if (!instance.hasDecorator('swagger')) {
    await instance.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: { title: 'devicehub REST API', description: 'DeviceHive-compatible REST API', version: hub.info.info().serverVersion },
        servers: [{ url: basePath === '' ? '/' : basePath }],
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } }
      },
      transform: ({ schema, url }) => ({ schema, url: url.startsWith(basePath) ? url.slice(basePath.length) || '/' : url })
    })
  }
  instance.addSchema(ErrorBody)
  if (options.docs !== false) {
    await instance.register(swaggerUi, {
      routePrefix: '/docs', uiConfig: { deepLinking: true }, staticCSP: true, uiHooks: { onRequest: redirectToTrailingSlash }
    })
  }

  app.options('/*', { schema: { hide: true } }, async (_request, reply) => reply.code(200).send())
  app.get('/openapi.json', { schema: { hide: true } }, async () => instance.swagger())

  const origin = originPolicy(options.publicUrl, options.trustProxy)
  infoRoutes(app, hub, { basePath, webSocketUrl: options.webSocketUrl, pluginProxyUrl: options.pluginProxy?.url, origin })
  healthRoutes(app, hub)
  for (const register of routeModules) register(app, hub)

  if (options.webSocket !== false) {
    await ensureWebSocketSupport(instance, options.webSocket)
    const registry = webSocketRegistry(instance)
    instance.addHook('preClose', async () => registry.closeAll())
    installWebSocketRoute(instance, '/websocket', { ...options.webSocket, hub, basePath, origin })
  }
}

/** The endpoints under the context path: the plugin proxy (P1). */
const contextPlugin: FastifyPluginAsync<DeviceHubPluginOptions> = async (instance, options) => {
  installReadinessGate(instance, options.hub, options.startupWaitMs)
  pluginProxyRoute(instance, options.hub, options.pluginProxy ?? {})
}

/**
 * @example
 * const app = Fastify()
 * await app.register(devicehubPlugin, { hub, prefix: '/api/rest' })
 * // REST under /api/rest, the plugin proxy at /api/plugin/proxy
 */
export const devicehubPlugin: FastifyPluginAsync<DeviceHubPluginOptions> = Object.assign(
  async (instance: Parameters<FastifyPluginAsync<DeviceHubPluginOptions>>[0], options: DeviceHubPluginOptions & { prefix?: string }) => {
    const prefix = (options.prefix ?? '').replace(/\/+$/, '')
    // One WebSocket server (upgrade listener) for both parts; a host's own is reused. The plugin
    // proxy checks its smaller frame limit itself.
    const webSocket = options.webSocket === false ? {} : options.webSocket
    const maxPayload = Math.max(webSocket?.maxPayload ?? DEFAULT_MAX_PAYLOAD, options.pluginProxy?.maxFrameBytes ?? 0)
    await ensureWebSocketSupport(instance, { ...webSocket, maxPayload })
    await instance.register(restPlugin, { ...options, prefix })
    await instance.register(contextPlugin, { ...options, prefix: contextPath(prefix) })
  },
  // Runs in the host's context (like fastify-plugin), so the two parts can have different prefixes.
  { [Symbol.for('skip-override')]: true }
)
