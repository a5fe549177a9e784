/**
 * Schema compilers for the devicehub routes. Validation is Fastify's own (Ajv via
 * @fastify/ajv-compiler, same options), with three changes: an absent body skips the body
 * schema, so the service can answer the contract's `Error! Validation failed: Object is null`
 * (or treat it as `{}` where the contract says so); no number that is not finite gets through
 * (issue #16): Ajv's type coercion turns `"Infinity"` and `"1e400"` into Infinity and then
 * passes it through `integer`, `minimum` and `maximum`; JSON.parse turns `1e400` into Infinity
 * too; and every body and query string first goes through the lenient-input rules (R12,
 * lib/core/lenient-input.ts), the one place where DeviceHive's loose binding is reproduced.
 *
 * Both compilers are shared by every app in the process and remember what they compiled, keyed
 * by the schema's JSON text (route modules build some schemas inline, so object identity is not
 * enough): a second app (a test rig started again, a test file building many apps) reuses the
 * first one's code instead of generating it again. Compiling is most of the cost of `ready()`.
 * The caches hold one entry per distinct schema of the code, so they stay small.
 */
import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyInstance, FastifySchema, FastifySchemaValidationError, preValidationHookHandler } from 'fastify'
import { normaliseInput } from '../core/lenient-input.js'
import { NUMBER_NOT_FINITE, holdsNonFinite } from '../core/validation.js'
import { routeHooks } from './route-hooks.js'
import { ErrorBody } from './schemas.js'

type Validate = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null }
type Serialize = (data: unknown) => string
interface RouteSchema { schema: FastifySchema, httpPart?: string, httpStatus?: string, contentType?: string }

/** One Ajv for the process; Ajv itself caches compiled schemas by object. */
const compileValidator = AjvCompiler()({}, { customOptions: {} }) as unknown as (route: RouteSchema) => Validate
const compileSerializer = SerializerSelector()({ ErrorBody }, {}) as unknown as (route: RouteSchema) => Serialize
// Memo caches (compiled code by schema text, immutable once built): not per-app state.
const validators = new Map<string, Validate>()
const serializers = new Map<string, Serialize>()

export function installValidator (app: FastifyInstance): void {
  app.setValidatorCompiler((route) => {
    const key = `${route.httpPart ?? ''} ${JSON.stringify(route.schema)}`
    let validate = validators.get(key)
    if (validate === undefined) validators.set(key, validate = compileValidator(route))
    const checked = validate
    const body = route.httpPart === 'body'
    const wrapped: Validate = (data: unknown) => {
      // Fastify hands an absent body to the validator as null.
      if (body && (data === undefined || data === null)) return true
      const ok = checked(data)
      wrapped.errors = checked.errors
      if (!ok) return false
      const path = nonFinitePath(data, body)
      if (path === undefined) return true
      wrapped.errors = [{ keyword: 'finite', instancePath: path, schemaPath: '#', params: {}, message: NUMBER_NOT_FINITE }]
      return false
    }
    return wrapped
  })
  // Normalising never rejects, so its place relative to the action check changes no answer.
  // Each route with a schema gets its own hook (route-hooks.ts): no `request.routeOptions`
  // object per request, nothing run for routes without one. The schema object is the one the
  // route will use (Fastify normalises it in place after onRoute), read when a request comes.
  app.addHook('onRoute', (route) => {
    const schema = route.schema
    if (schema === undefined || (schema.body === undefined && schema.querystring === undefined && !('query' in schema))) return
    route.preValidation = [normaliser(schema), ...routeHooks(route.preValidation)]
  })
}

function normaliser (schema: FastifySchema): preValidationHookHandler {
  return (request, _reply, done) => {
    if (schema.body !== undefined && request.body !== undefined && request.body !== null) {
      request.body = normaliseInput(schema.body as object, request.body)
    }
    if (schema.querystring !== undefined && request.query !== undefined) {
      request.query = normaliseInput(schema.querystring as object, request.query, { emptyIsNull: true })
    }
    done()
  }
}

export function installSerializer (app: FastifyInstance): void {
  app.setSerializerCompiler((route) => {
    const key = `${route.httpStatus ?? ''} ${route.contentType ?? ''} ${JSON.stringify(route.schema)}`
    let serialize = serializers.get(key)
    if (serialize === undefined) serializers.set(key, serialize = compileSerializer(route as RouteSchema))
    return serialize
  })
}

/**
 * The path of the first number that is not finite: the whole tree of a body, the values and
 * arrays of a querystring or params. Nearly every input has none: a first walk only looks
 * (recursive, allocating nothing: the JSON parser bounded a body's depth at MAX_JSON_DEPTH), and
 * the path is spelled out (iteratively) only for an input that has one.
 */
function nonFinitePath (data: unknown, deep: boolean): string | undefined {
  // A querystring's values and the arrays under them, not deeper (as firstNonFinitePath).
  return holdsNonFinite(data, deep ? Number.POSITIVE_INFINITY : 1) ? firstNonFinitePath(data, deep) : undefined
}

function firstNonFinitePath (data: unknown, deep: boolean): string | undefined {
  const stack: Array<[unknown, string]> = [[data, '']]
  while (stack.length > 0) {
    const [item, path] = stack.pop()!
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return path
    } else if (item !== null && typeof item === 'object' && (deep || path.split('/').length <= 2)) {
      for (const [key, child] of Object.entries(item)) {
        if (child !== null && (typeof child === 'object' || typeof child === 'number')) stack.push([child, `${path}/${key}`])
      }
    }
  }
  return undefined
}
