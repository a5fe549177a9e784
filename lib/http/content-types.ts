/**
 * Request bodies (spec §1.2, R11): JSON only; a request without Content-Type is read as JSON;
 * an empty JSON body counts as no body (DeviceHive clients send one on PUT and DELETE).
 * Non-empty bodies go through Fastify's own JSON parser (prototype-poisoning guarded), after a
 * scan of the text that refuses nesting deeper than 400 levels (issue #16) before anything
 * recursive (the parser's prototype check, JSON.stringify when storing) sees it.
 */
import type { FastifyInstance } from 'fastify'
import { badRequest } from '../core/errors.js'
import { JSON_TOO_DEEP, jsonTooDeep } from '../core/validation.js'


export function installJsonParser (app: FastifyInstance, bodyLimit: number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  const parse = (request: Parameters<typeof parseJson>[0], body: string, done: (err: Error | null, body?: unknown) => void): void => {
    if (body.trim() === '') {
      done(null, undefined)
      return
    }
    if (jsonTooDeep(body)) {
      done(badRequest(JSON_TOO_DEEP))
      return
    }
    // A literal `null` body is no object either: the service answers `Object is null`.
    parseJson(request, body, (error, value) => done(error, value === null ? undefined : value))
  }
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, parse)
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (request, body, done) => {
    if (request.headers['content-type'] === undefined || request.headers['content-type'] === '') {
      parse(request, body as string, done)
      return
    }
    done(Object.assign(new Error('HTTP 415 Unsupported Media Type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }))
  })
}
