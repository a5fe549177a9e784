/** `GET|PUT|DELETE /configuration/{name}` (spec §4, D3). */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import { ConfigurationView } from '../../core/configuration/configuration-schemas.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { errorResponses } from '../schemas.js'
import type { App } from '../types.js'

const Params = Type.Object({ name: Type.String() })

export function configurationRoutes (app: App, hub: DeviceHub): void {
  app.get('/configuration/:name', {
    config: { action: Action.ManageConfiguration },
    schema: {
      tags: ['configuration'], summary: 'Read a setting', security: [{ bearer: [] }], params: Params,
      response: { 200: ConfigurationView, ...errorResponses }
    }
  }, async (request) => hub.configuration.get(request.principal, request.params.name))

  app.put('/configuration/:name', {
    config: { action: Action.ManageConfiguration },
    schema: {
      tags: ['configuration'],
      summary: 'Create or replace a setting',
      security: [{ bearer: [] }],
      params: Params,
      body: Type.Object({ value: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])) }),
      response: { 200: ConfigurationView, ...errorResponses }
    }
  }, async (request) => hub.configuration.put(request.principal, request.params.name, request.body))

  app.delete('/configuration/:name', {
    config: { action: Action.ManageConfiguration },
    schema: {
      tags: ['configuration'], summary: 'Delete a setting', security: [{ bearer: [] }], params: Params,
      response: { 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    await hub.configuration.delete(request.principal, request.params.name)
    return reply.code(204).send(null)
  })
}
