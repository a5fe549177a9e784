/**
 * Bearer authentication (auth spec §1.5): no header means anonymous; any other scheme, an empty
 * token or a token that fails verification answers 401 on every route, public ones included.
 * Then, before validation, the route's declared action is checked (401 anonymous, 403 missing).
 */
import type { FastifyInstance } from 'fastify'
import { requireAction } from '../core/auth/permissions.js'
import type { DeviceHub } from '../core/devicehub.js'
import { unauthorized } from '../core/errors.js'

export function installAuthHook (app: FastifyInstance, hub: DeviceHub): void {
  app.decorateRequest('principal', undefined)
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization
    if (header === undefined) return
    if (header.length <= 6 || !header.startsWith('Bearer')) throw unauthorized()
    const token = header.slice(6).trim()
    if (token === '') throw unauthorized()
    request.principal = await hub.tokens.authenticate(token)
  })
  app.addHook('preValidation', async (request) => {
    const action = request.routeOptions.config.action
    if (action !== undefined) requireAction(request.principal, action)
  })
}
