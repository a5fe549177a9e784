/**
 * `POST /token/plugin/create`, `GET /token/plugin/authenticate` (auth spec §2.4, §2.5). The
 * create answer also names the plugin proxy (`proxyEndpoint`), so a plugin given fresh tokens
 * knows where to use them without the registration answer.
 */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { PluginTokenInfo, PluginTokenPair, PluginTokenRequest } from '../../core/plugins/plugin-schemas.js'
import { errorResponses } from '../schemas.js'
import { pluginProxyUrl } from '../websocket-url.js'
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
      response: { 201: PluginTokenPair, ...errorResponses }
    }
  }, async (request, reply) => {
    const tokens = await hub.plugins.createToken(request.principal, request.body)
    return reply.code(201).send({ ...tokens, proxyEndpoint: pluginProxyUrl(app, request) })
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
