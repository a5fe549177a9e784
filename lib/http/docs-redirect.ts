/**
 * Swagger UI's page links its assets relative to itself: from `…/docs/` they resolve to
 * `…/docs/static/…`, but @fastify/swagger-ui writes them for `…/docs` (no slash) as
 * `/docs/static/…`, without the prefix the UI is mounted under, and the page stays blank. So
 * `…/docs` answers a redirect to `docs/`: relative, so it stays right behind a proxy that
 * mounts the server under another path.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * The `onRequest` hook for Swagger UI's routes (its `uiHooks`).
 *
 * @example
 * await app.register(swaggerUi, { routePrefix: '/docs', uiHooks: { onRequest: redirectToTrailingSlash } })
 * // GET /api/rest/docs?x=1 -> 302, Location: docs/?x=1
 */
export async function redirectToTrailingSlash (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const [path = '', query] = request.url.split(/\?(.*)/s, 2)
  if (path.endsWith('/') || !/\/docs$/.test(path)) return
  const last = path.slice(path.lastIndexOf('/') + 1)
  await reply.redirect(`${last}/${query === undefined ? '' : `?${query}`}`, 302)
}
