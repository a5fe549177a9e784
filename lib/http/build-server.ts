/**
 * The standalone Fastify app: the devicehub plugin under one base path (D8), method override,
 * structured logs without secrets. Builds the app; does not listen.
 */
import Fastify from 'fastify'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { DeviceHub } from '../core/devicehub.js'
import { sendError } from './error-handler.js'
import { consolePath, registerConsole } from './console.js'
import type { MetricsOptions } from './metrics.js'
import { installMetrics } from './metrics.js'
import { devicehubPlugin } from './plugin.js'
import type { PluginProxyOptions } from './plugin-proxy/route.js'
import { originPolicy } from './public-origin.js'
import { OneLinePerRequest } from './request-log.js'
import type { WebSocketOptions } from './websocket/websocket-routes.js'
import { webSocketRegistry } from './websocket/registry.js'
import { DEFAULT_MAX_PAYLOAD, devicehubWebSocketPlugin, ensureWebSocketSupport } from './websocket/websocket-routes.js'

export interface BuildServerOptions {
  hub: DeviceHub
  /** REST base path (default `/api/rest`). */
  basePath?: string
  /** Fastify logger: `false` (default), `true`, or pino options such as `{ level: 'info' }`. */
  logger?: FastifyServerOptions['logger']
  bodyLimit?: number
  /**
   * Fastify's `trustProxy`: behind a reverse proxy, take the client address from
   * `X-Forwarded-For` (login throttling counts per address). Default false.
   */
  trustProxy?: FastifyServerOptions['trustProxy']
  /**
   * The public origin clients use, e.g. `https://iot.example.com` (`--public-url`): the URLs the
   * server reports (`webSocketServerUrl`, `proxyEndpoint`, `restServerUrl`) start with it. Without
   * it they come from the proxy's headers when `trustProxy` is set, else from the address and
   * port the client connected to; never from headers of an untrusted client.
   */
  publicUrl?: string
  /**
   * Longest time to receive a whole request, headers and body, in ms (default 30 s): a body
   * sent one byte at a time is cut off. It does not limit the response (long polls wait longer).
   */
  requestTimeoutMs?: number
  /** Longest time to receive the request headers, in ms (default 10 s, at most the request timeout). */
  headersTimeoutMs?: number
  webSocketUrl?: string
  /** Plugin proxy limits and a fixed `proxyEndpoint` URL. */
  pluginProxy?: PluginProxyOptions
  /** Limits of the WebSocket API (inbound frame size, outbound buffer, send timeout). */
  webSocket?: WebSocketOptions
  /** Close the hub (and its store) when the app closes (default true). */
  closeHub?: boolean
  /**
   * Prometheus metrics at `GET /metrics` (outside the base path). Default false: the endpoint
   * has no authentication, so expose it only where your scraper runs.
   */
  metrics?: boolean | MetricsOptions
  /** Swagger UI at `{basePath}/docs` (default true). */
  docs?: boolean
  /** Serve the web console at `<context>/console` (default true). */
  console?: boolean
  /**
   * How long a request that arrives before `hub.initialise()` finished waits for it before it
   * gets 503 with `Retry-After` (default 10 s). Health probes never wait.
   */
  startupWaitMs?: number
  /**
   * How long `close()` lets requests in flight finish before it closes every connection left,
   * in ms (default 10 s): a client that stops reading its answer cannot hold the shutdown.
   */
  closeGraceMs?: number
}

const OVERRIDABLE = new Set(['PUT', 'DELETE', 'HEAD', 'OPTIONS'])

const SECRET_PARAMETER = /^(token|access_?token|refresh_?token|password)$/i

/**
 * Drops secret query parameters (`token` of plugin authenticate, and the like) from logged
 * URLs, whatever their spelling: a name is compared after percent-decoding, as the query
 * parser reads it (`%74oken=` is `token=`).
 *
 * @example
 * redactUrl('/api/rest/plugin?%74oken=abc&x=1') // '/api/rest/plugin?%74oken=[redacted]&x=1'
 */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const parts = url.slice(q + 1).split('&').map((part) => {
    const eq = part.indexOf('=')
    const raw = eq < 0 ? part : part.slice(0, eq)
    let name = raw
    try {
      name = decodeURIComponent(raw.replace(/\+/g, ' '))
    } catch {
      // A malformed escape: the parser refuses it too; compare the raw text.
    }
    return SECRET_PARAMETER.test(name.trim()) ? `${raw}=[redacted]` : part
  })
  return `${url.slice(0, q + 1)}${parts.join('&')}`
}

/** What `close()` gives requests in flight before it closes their connections. */
export const DEFAULT_CLOSE_GRACE_MS = 10_000

/** Receiving a whole request (headers and body) may take at most this long (issue #16). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
/** Receiving the request headers may take at most this long. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000

/**
 * @example
 * const app = await buildServer({ hub })
 * await app.listen({ port: 8080 })
 */
export async function buildServer (options: BuildServerOptions): Promise<FastifyInstance> {
  const basePath = normaliseBasePath(options.basePath ?? '/api/rest')
  const logger = options.logger === undefined || options.logger === false
    ? false
    : {
        ...(options.logger === true ? {} : options.logger),
        redact: { paths: ['req.headers.authorization', 'password', 'refreshToken', 'accessToken'], remove: true },
        serializers: {
          req: (req: { method: string, url: string, ip?: string, id?: string }) => ({
            id: req.id, method: req.method, url: redactUrl(req.url), remoteAddress: req.ip
          })
        }
      }
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const headersTimeout = Math.min(options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout)
  const app = Fastify({
    logger,
    // One line per request instead of Fastify's two.
    logController: new OneLinePerRequest(),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    requestTimeout,
    trustProxy: options.trustProxy ?? false,
    // Node checks these timeouts on an interval (30 s by default): check every second, or
    // the limits would only hold to within 30 s.
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout) },
    // Device ids are at most 48 characters, but a longer one must reach the route to get the
    // contract's 400 rather than the router's 414.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    // Errors raised before routing (bad URL encoding, overlong parameters) get the contract's body too.
    frameworkErrors (error, _request, reply) {
      const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400
      return sendError(reply, status, status === 414 ? 'HTTP 414 URI Too Long' : 'Invalid request parameters')
    },
    // X-HTTP-Method-Override (spec §1.2) must change the method before routing; rewriteUrl is
    // the one hook that runs before the router, on the raw request, for inject() as well.
    rewriteUrl (req) {
      const override = req.headers['x-http-method-override']
      if (req.method === 'POST' && typeof override === 'string' && OVERRIDABLE.has(override.toUpperCase())) {
        req.method = override.toUpperCase()
      }
      return req.url ?? '/'
    }
  })
  const metricsOptions = options.metrics === true ? {} : options.metrics === false ? undefined : options.metrics
  // WebSocket gauges read the app's session registry at scrape time (set up with the WebSocket server below).
  const hub = options.hub
  const metrics = metricsOptions === undefined
    ? undefined
    : installMetrics(app, hub, {
      webSocket: {
        sessions: () => webSocketRegistry(app).sessions,
        subscriptions: () => webSocketRegistry(app).subscriptions
      },
      ...metricsOptions
    })
  // One WebSocket server for every WebSocket route of this app (upgrades go through the router).
  // Its frame limit is the WebSocket API's (raised only by a larger explicit plugin proxy limit);
  // the plugin proxy checks its own smaller limit (64 KiB) itself.
  const maxPayload = Math.max(options.webSocket?.maxPayload ?? DEFAULT_MAX_PAYLOAD, options.pluginProxy?.maxFrameBytes ?? 0)
  await ensureWebSocketSupport(app, { ...options.webSocket, maxPayload })
  await app.register(devicehubPlugin, {
    hub: options.hub,
    prefix: basePath,
    bodyLimit: options.bodyLimit,
    webSocketUrl: options.webSocketUrl,
    webSocket: options.webSocket ?? {},
    pluginProxy: options.pluginProxy,
    docs: options.docs,
    startupWaitMs: options.startupWaitMs,
    publicUrl: options.publicUrl,
    trustProxy: Boolean(options.trustProxy)
  })
  // The URL /info reports (`<context>/websocket`) and the `/websocket` alias (auth spec §0).
  const context = basePath.replace(/\/rest$/, '')
  const paths = [...new Set([`${context}/websocket`, '/websocket'])].filter((path) => path !== `${basePath}/websocket`)
  const origin = originPolicy(options.publicUrl, options.trustProxy)
  await app.register(devicehubWebSocketPlugin, {
    ...options.webSocket, hub: options.hub, basePath, paths, startupWaitMs: options.startupWaitMs, origin
  })
  if (metrics !== undefined) {
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      return reply.type(metrics.registry.contentType).header('cache-control', 'no-store').send(await metrics.registry.metrics())
    })
    app.addHook('onClose', async () => metrics.close())
  }
  if (options.console !== false) registerConsole(app, { path: consolePath(basePath), restBase: basePath })
  if (basePath !== '') {
    // `/` outside the API answers where things are instead of a 404.
    const links = {
      name: 'devicehub',
      version: options.hub.info.info().serverVersion,
      api: basePath,
      openapi: `${basePath}/openapi.json`,
      docs: options.docs === false ? undefined : `${basePath}/docs`,
      console: options.console === false ? undefined : consolePath(basePath),
      health: `${basePath}/health`,
      ready: `${basePath}/health/ready`,
      metrics: metrics === undefined ? undefined : '/metrics'
    }
    app.get('/', { schema: { hide: true } }, async () => links)
  }
  app.setNotFoundHandler((_request, reply) => sendError(reply, 404, 'HTTP 404 Not Found'))
  closeAfterGrace(app, options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS)
  if (options.closeHub !== false) app.addHook('onClose', async () => options.hub.close())
  return app
}

/**
 * Node's `server.close()` waits for every connection with a request in flight, and one whose
 * client stopped reading never finishes: the shutdown waited for the client's own timeout (60 s
 * and more). From the start of `close()`, requests get `graceMs`; then the connections still
 * open are closed. Idle ones close at once anyway; parked polls and WebSockets are answered and
 * closed by the plugin's own `preClose` hooks, well inside the grace.
 */
function closeAfterGrace (app: FastifyInstance, graceMs: number): void {
  let timer: NodeJS.Timeout | undefined
  app.addHook('preClose', async () => {
    timer = setTimeout(() => app.server.closeAllConnections(), graceMs)
    timer.unref()
  })
  app.addHook('onClose', async () => clearTimeout(timer))
}

/**
 * `api/rest`, `/api/rest/` and ` /api/rest ` all mean `/api/rest`; `/` and `` mean the root.
 *
 * @example
 * normaliseBasePath('foo/') // '/foo'
 */
export function normaliseBasePath (path: string): string {
  const trimmed = path.trim().replace(/\/+$/, '')
  if (trimmed === '') return ''
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}
