/**
 * Bearer authentication (auth spec §1.5): no header means anonymous; any other scheme, an empty
 * token or a token that fails verification answers 401 on every route, public ones included.
 * Then, before validation, the route's declared action is checked (401 anonymous, 403 missing).
 *
 * Both hooks run on every request, so they are callback hooks: a request without a token, and
 * every action check, pass without a promise or a trip through the microtask queue. The action
 * check is each route's own hook (route-hooks.ts), added only to routes that declare an action.
 */
import type { FastifyInstance, onRequestHookHandler, preValidationHookHandler } from 'fastify'
import type { Action } from '../core/auth/actions.js'
import { requireAction } from '../core/auth/permissions.js'
import type { DeviceHub } from '../core/devicehub.js'
import { unauthorized } from '../core/errors.js'
import { routeHooks } from './route-hooks.js'

export function installAuthHook (app: FastifyInstance, hub: DeviceHub): void {
  app.decorateRequest('principal', undefined)
  const authenticate: onRequestHookHandler = (request, _reply, done) => {
    const header = request.headers.authorization
    if (header === undefined) {
      done()
      return
    }
    if (header.length <= 6 || !header.startsWith('Bearer')) {
      done(unauthorized())
      return
    }
    const token = header.slice(6).trim()
    if (token === '') {
      done(unauthorized())
      return
    }
    hub.tokens.authenticate(token).then((principal) => {
      request.principal = principal
      done()
    }, done)
  }
  app.addHook('onRequest', authenticate)
  app.addHook('onRoute', (route) => {
    const action = route.config?.action
    if (action === undefined) return
    route.preValidation = [...routeHooks(route.preValidation), actionCheck(action)]
  })
}

function actionCheck (action: Action): preValidationHookHandler {
  return (request, _reply, done) => {
    try {
      requireAction(request.principal, action)
    } catch (error) {
      done(error as Error)
      return
    }
    done()
  }
}
