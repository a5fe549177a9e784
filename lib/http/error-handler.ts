/**
 * The only place that knows HTTP statuses: one table from core error codes to statuses, and the
 * contract's body `{ "error": <status>, "message": ... }` for every failure.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { DeviceHubErrorCode } from '../core/errors.js'
import { Messages, isDeviceHubError } from '../core/errors.js'

export const STATUS_BY_CODE: Record<DeviceHubErrorCode, number> = {
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500
}

/** Fastify's own errors that are the client's fault, with the contract's wording. */
const FASTIFY_ERRORS: Record<string, { status: number, message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'HTTP 415 Unsupported Media Type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: Messages.invalidParameters },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'Request body is too large' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: Messages.invalidParameters },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: Messages.invalidParameters },
  FST_ERR_BAD_URL: { status: 400, message: Messages.invalidParameters },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, message: Messages.invalidParameters }
}

export function sendError (reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: status, message })
}

function validationMessage (error: FastifyError, request: FastifyRequest): string {
  const messages = request.routeOptions.config.validationMessages
  if (messages !== undefined) {
    for (const issue of error.validation ?? []) {
      const path = issue.instancePath
      for (const [prefix, message] of Object.entries(messages)) {
        if (path === prefix || path.startsWith(`${prefix}/`)) return message
      }
    }
  }
  return Messages.invalidParameters
}

export function installErrorHandler (app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    request.log.debug({ code: error.code, message: error.message, validation: error.validation }, 'request failed')
    if (isDeviceHubError(error)) {
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds))
      return sendError(reply, STATUS_BY_CODE[error.code], error.message)
    }
    if (error.validation !== undefined) {
      // A path segment that is not the id it should be: DeviceHive (JAX-RS) answers 404.
      if (error.validationContext === 'params') return sendError(reply, 404, 'HTTP 404 Not Found')
      return sendError(reply, 400, validationMessage(error, request))
    }
    const known = error.code === undefined ? undefined : FASTIFY_ERRORS[error.code]
    if (known !== undefined) return sendError(reply, known.status, known.message)
    if (error instanceof SyntaxError || (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500)) {
      return sendError(
        reply, error.statusCode ?? 400,
        error.statusCode === 400 || error.statusCode === undefined ? Messages.invalidParameters : error.message
      )
    }
    request.log.error({ err: error }, 'unhandled error')
    return sendError(reply, 500, Messages.internal)
  })
}
