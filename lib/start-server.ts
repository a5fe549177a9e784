/**
 * One call from nothing to a listening server: open the store, build the core and the app,
 * listen. What `devicehub serve` and firmware test rigs use.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { TokenLifetimes } from './core/auth/auth-service.js'
import type { DeviceHub } from './core/devicehub.js'
import { createDeviceHub } from './core/devicehub.js'
import type { Limits } from './core/context.js'
import { buildServer } from './http/build-server.js'
import { createPostgresHub } from './hubs/postgres-hub.js'
import type { Hub } from './core/realtime/hub.js'
import { isPostgresUrl, openStore } from './store/open-store.js'

export interface StartServerOptions {
  /** SQLite file path, `:memory:` (default) or a `postgres://` URL. */
  db?: string
  /** Port; 0 (default) picks a free one. */
  port?: number
  /** Default `127.0.0.1`. */
  host?: string
  basePath?: string
  jwtSecret?: string
  admin?: { login?: string, password?: string }
  tokenLifetimes?: Partial<TokenLifetimes>
  limits?: Partial<Limits>
  /** R8: how long commands and notifications are kept, in ms (default 30 days). */
  retentionMs?: number
  logger?: FastifyServerOptions['logger']
  bodyLimit?: number
}

export interface RunningServer {
  /** Base URL of the REST API, e.g. `http://127.0.0.1:40123/api/rest`. */
  readonly url: string
  readonly port: number
  readonly app: FastifyInstance
  readonly hub: DeviceHub
  /** An access/refresh token pair for the admin (user 1). */
  adminTokens(): Promise<{ accessToken: string, refreshToken: string }>
  /** Stops listening (in-flight requests finish) and closes the store. */
  close(): Promise<void>
}

/**
 * @example
 * const server = await startServer({ db: ':memory:', port: 0 })
 * const { accessToken } = await server.adminTokens()
 * await fetch(`${server.url}/device`, { headers: { authorization: `Bearer ${accessToken}` } })
 * await server.close()
 */
export async function startServer (options: StartServerOptions = {}): Promise<RunningServer> {
  const location = options.db ?? ':memory:'
  const store = await openStore(location)
  let hub: DeviceHub
  let doorbells: Hub | undefined
  try {
    // Several instances over one PostgreSQL database wake each other's long polls through
    // LISTEN/NOTIFY; one process on SQLite needs nothing more than the memory hub.
    if (isPostgresUrl(location)) doorbells = await createPostgresHub(location)
    hub = await createDeviceHub({
      store,
      hub: doorbells,
      jwtSecret: options.jwtSecret,
      admin: options.admin,
      tokenLifetimes: options.tokenLifetimes,
      limits: options.limits,
      retentionMs: options.retentionMs
    })
  } catch (error) {
    await doorbells?.close()
    await store.close()
    throw error
  }
  const basePath = options.basePath ?? '/api/rest'
  const app = await buildServer({ hub, basePath, logger: options.logger, bodyLimit: options.bodyLimit })
  const host = options.host ?? '127.0.0.1'
  try {
    await app.listen({ port: options.port ?? 0, host })
  } catch (error) {
    await app.close()
    throw error
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : options.port ?? 0
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host
  return {
    url: `http://${urlHost}:${port}${basePath}`,
    port,
    app,
    hub,
    adminTokens: () => hub.tokens.issueForUser(1),
    close: () => app.close()
  }
}

