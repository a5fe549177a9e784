/**
 * Schema validation as Fastify does it (Ajv via @fastify/ajv-compiler, same options), with one
 * change: an absent body skips the body schema, so the service can answer the contract's
 * `Error! Validation failed: Object is null` (or treat it as `{}` where the contract says so).
 */
import { AjvCompiler } from '@fastify/ajv-compiler'
import type { FastifyInstance, FastifySchema, FastifySchemaValidationError } from 'fastify'

type Validate = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null }

export function installValidator (app: FastifyInstance): void {
  const compile = AjvCompiler()({}, { customOptions: {} }) as unknown as (route: { schema: FastifySchema, httpPart?: string }) => Validate
  app.setValidatorCompiler((route) => {
    const validate = compile(route)
    if (route.httpPart !== 'body') return validate
    const wrapped: Validate = (data: unknown) => {
      // Fastify hands an absent body to the validator as null.
      if (data === undefined || data === null) return true
      const ok = validate(data)
      wrapped.errors = validate.errors
      return ok
    }
    return wrapped
  })
}
