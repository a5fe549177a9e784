/**
 * 404 vs 405 (spec §1.5): a mirror router records every route of the plugin, so the not-found
 * handler can tell "no such path" from "path exists, method does not" with exactly Fastify's
 * matching rules (literal segments before parameters).
 */
import type { FastifyInstance } from 'fastify'
import FindMyWay from 'find-my-way'
import type { HTTPMethod } from 'find-my-way'
import { sendError } from './error-handler.js'

const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']

export function installNotFoundHandler (app: FastifyInstance): void {
  const mirror = FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true })
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      if (METHODS.includes(method as HTTPMethod) && route.url !== undefined && !mirror.hasRoute(method as HTTPMethod, route.url)) {
        mirror.on(method as HTTPMethod, route.url, () => {})
      }
    }
  })
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url
    const allowed = METHODS.filter((method) => method !== request.method && mirror.find(method, path) !== null)
    if (allowed.length > 0 && request.method !== 'OPTIONS') {
      return sendError(reply, 405, 'HTTP 405 Method Not Allowed')
    }
    return sendError(reply, 404, 'HTTP 404 Not Found')
  })
}
