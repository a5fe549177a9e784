/** `POST /token`, `/token/create`, `/token/refresh` (auth spec §2.1-§2.3). */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import { AccessTokenView, TokenCreateBody, TokenPair } from '../../core/auth/auth-schemas.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { ACTIONS_MESSAGE } from '../../core/auth/auth-service.js'
import { badRequest, Messages } from '../../core/errors.js'
import { errorResponses } from '../schemas.js'
import type { App } from '../types.js'

export function tokenRoutes (app: App, hub: DeviceHub): void {
  app.post('/token', {
    schema: {
      tags: ['token'],
      summary: 'Log in with login and password',
      body: Type.Object({
        login: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        password: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Null()]))
      }),
      response: { 201: TokenPair, ...errorResponses }
    }
  }, async (request, reply) => {
    if (request.body === undefined) throw badRequest(Messages.objectIsNull)
    const tokens = await hub.tokens.login(request.body.login, request.body.password, { address: request.ip })
    return reply.code(201).send(tokens)
  })

  app.post('/token/create', {
    config: { action: Action.ManageToken, validationMessages: { '/actions': ACTIONS_MESSAGE } },
    schema: {
      tags: ['token'],
      summary: 'Mint a token pair for a user (ManageToken)',
      security: [{ bearer: [] }],
      body: TokenCreateBody,
      response: { 201: TokenPair, ...errorResponses }
    }
  }, async (request, reply) => {
    const body = request.body
    const tokens = await hub.tokens.createTokens(request.principal, body === undefined
      ? undefined
      : { ...body, userId: body.userId ?? undefined })
    return reply.code(201).send(tokens)
  })

  app.post('/token/refresh', {
    schema: {
      tags: ['token'],
      summary: 'A new access token from a refresh token',
      body: Type.Object({ refreshToken: Type.Optional(Type.Unknown()) }),
      response: { 201: AccessTokenView, ...errorResponses }
    }
  }, async (request, reply) => {
    const token = await hub.tokens.refresh(request.body?.refreshToken)
    return reply.code(201).send(token)
  })
}
