/**
 * The DeviceHive REST surface as an encapsulated Fastify plugin: mount it in a host app under
 * any prefix. Its hooks (auth, CORS), error handler, JSON parser and 404/405 handler apply to
 * its own routes only.
 */
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { DeviceHub } from '../core/devicehub.js'
import { installAuthHook } from './auth-hook.js'
import { installJsonParser } from './content-types.js'
import { installCors } from './cors.js'
import { installErrorHandler } from './error-handler.js'
import { installNotFoundHandler } from './method-not-allowed.js'
import { infoRoutes } from './routes/info.js'
import { routeModules } from './routes/index.js'
import { ErrorBody } from './schemas.js'
import type { App } from './types.js'
import { installValidator } from './validation.js'

export interface DeviceHubPluginOptions {
  hub: DeviceHub
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number
  /** Overrides the `webSocketServerUrl` that `/info` reports. */
  webSocketUrl?: string
}

/**
 * @example
 * const app = Fastify()
 * await app.register(devicehubPlugin, { hub, prefix: '/api/rest' })
 */
export const devicehubPlugin: FastifyPluginAsync<DeviceHubPluginOptions> = async (instance, options) => {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>() as unknown as App
  const { hub } = options
  const basePath = instance.prefix
  installJsonParser(instance, options.bodyLimit ?? 1024 * 1024)
  installValidator(instance)
  installErrorHandler(instance)
  installNotFoundHandler(instance)
  installCors(instance)
  installAuthHook(instance, hub)
  // Pending long polls answer `[]` before the server stops, so close never waits on them.
  instance.addHook('preClose', async () => hub.releaseWaiters())

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

  app.options('/*', { schema: { hide: true } }, async (_request, reply) => reply.code(200).send())
  app.get('/openapi.json', { schema: { hide: true } }, async () => instance.swagger())

  infoRoutes(app, hub, { basePath, webSocketUrl: options.webSocketUrl })
  for (const register of routeModules) register(app, hub)
}
