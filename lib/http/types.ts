/** Fastify type augmentation and the typed instance the routes use. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { Action } from '../core/auth/actions.js'
import type { Principal } from '../core/auth/principal.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; undefined for anonymous requests. */
    principal: Principal | undefined
  }
  interface FastifyContextConfig {
    /** The action the route needs, checked before validation (401, then 403). */
    action?: Action
    /** Messages for schema failures at a JSON path (e.g. `/data`), instead of the generic 400. */
    validationMessages?: Record<string, string>
    /** Answered while the hub is still initialising (the health probes); every other route waits. */
    servedWhileStarting?: boolean
  }
}

export type App = FastifyInstance<
  RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider
>
