/** DeviceHive's CORS headers on every response (spec §1.2); preflights need no token. */
import type { FastifyInstance } from 'fastify'

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-credentials': 'true',
  'access-control-allow-methods': 'OPTIONS, GET, POST, PUT, DELETE, HEAD',
  'access-control-max-age': '0',
  'access-control-allow-headers': 'Origin, Authorization, Accept, Content-Type, Auth-DeviceID, Auth-DeviceKey'
} as const

export function installCors (app: FastifyInstance): void {
  // A callback hook: it runs for every request, and has nothing to wait for.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(CORS_HEADERS)
    done()
  })
}
