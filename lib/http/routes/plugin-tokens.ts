/** `POST /token/plugin/create`, `GET /token/plugin/authenticate` (auth spec §2.4, §2.5). */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import { TokenPair } from '../../core/auth/auth-schemas.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { PluginTokenInfo, PluginTokenRequest } from '../../core/plugins/plugin-schemas.js'
import { errorResponses } from '../schemas.js'
import type { App } from '../types.js'

/** Registered from routes/index.ts; `/token/plugin/authenticate` is public. */
export function pluginTokenRoutes (app: App, hub: DeviceHub): void {
  app.post('/token/plugin/create', {
    config: { action: Action.ManagePlugin },
    schema: {
      tags: ['token'],
      summary: 'Mint a token pair for a plugin topic the caller owns (ManagePlugin)',
      security: [{ bearer: [] }],
      body: PluginTokenRequest,
      response: { 201: TokenPair, ...errorResponses }
    }
  }, async (request, reply) => {
    const tokens = await hub.plugins.createToken(request.principal, request.body)
    return reply.code(201).send(tokens)
  })

  app.get('/token/plugin/authenticate', {
    schema: {
      tags: ['token'],
      summary: 'Validate a plugin access token and return its payload',
      querystring: Type.Object({ token: Type.Optional(Type.String()) }),
      response: { 200: PluginTokenInfo, ...errorResponses }
    }
  }, async (request) => hub.plugins.authenticateToken(request.query.token))
}
