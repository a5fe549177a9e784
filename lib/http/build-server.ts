/**
 * The standalone Fastify app: the devicehub plugin under one base path (D8), method override,
 * structured logs without secrets. Builds the app; does not listen.
 */
import Fastify from 'fastify'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { DeviceHub } from '../core/devicehub.js'
import { sendError } from './error-handler.js'
import { devicehubPlugin } from './plugin.js'

export interface BuildServerOptions {
  hub: DeviceHub
  /** REST base path (default `/api/rest`). */
  basePath?: string
  /** Fastify logger: `false` (default), `true`, or pino options such as `{ level: 'info' }`. */
  logger?: FastifyServerOptions['logger']
  bodyLimit?: number
  webSocketUrl?: string
  /** Close the hub (and its store) when the app closes (default true). */
  closeHub?: boolean
}

const OVERRIDABLE = new Set(['PUT', 'DELETE', 'HEAD', 'OPTIONS'])

/** Drops the `token` query parameter (plugin authenticate) from logged URLs. */
export function redactUrl (url: string): string {
  return url.replace(/([?&]token=)[^&]*/gi, '$1[redacted]')
}

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
          req: (req: { method: string, url: string, ip?: string, id?: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url), remoteAddress: req.ip })
        }
      }
  const app = Fastify({
    logger,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
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
  await app.register(devicehubPlugin, { hub: options.hub, prefix: basePath, bodyLimit: options.bodyLimit, webSocketUrl: options.webSocketUrl })
  app.setNotFoundHandler((_request, reply) => sendError(reply, 404, 'HTTP 404 Not Found'))
  if (options.closeHub !== false) app.addHook('onClose', async () => options.hub.close())
  return app
}

function normaliseBasePath (path: string): string {
  const trimmed = path.trim().replace(/\/+$/, '')
  if (trimmed === '') return ''
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}
