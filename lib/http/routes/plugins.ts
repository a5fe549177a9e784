/** `GET /plugin`, `GET /plugin/count`, `POST`, `PUT`, `DELETE /plugin` (auth spec §2.7): ManagePlugin. */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { PluginCreateBody, PluginRegistration, PluginView } from '../../core/plugins/plugin-schemas.js'
import { Count, IntegerId, errorResponses } from '../schemas.js'
import type { App } from '../types.js'
import { pluginProxyUrl } from '../websocket-url.js'

const ListQuery = Type.Object({
  name: Type.Optional(Type.String()),
  namePattern: Type.Optional(Type.String()),
  topicName: Type.Optional(Type.String()),
  status: Type.Optional(Type.Integer({
    minimum: -2_147_483_648, maximum: 2_147_483_647, description: 'Ordinal: 0 ACTIVE, 1 INACTIVE, 2 CREATED'
  })),
  userId: Type.Optional(IntegerId),
  sortField: Type.Optional(Type.String({ description: 'id or name' })),
  sortOrder: Type.Optional(Type.String({ description: 'ASC or DESC' })),
  // Bounded so that a huge value answers 400 rather than failing in the database.
  take: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  skip: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }))
})

/** The subscription filter; the CSV lists are parsed and validated by the service. */
const filterQuery = {
  deviceId: Type.Optional(Type.String()),
  networkIds: Type.Optional(Type.String({ description: 'Comma-separated network ids' })),
  deviceTypeIds: Type.Optional(Type.String({ description: 'Comma-separated device type ids' })),
  names: Type.Optional(Type.String({ description: 'Comma-separated command or notification names' })),
  returnCommands: Type.Optional(Type.Boolean()),
  returnUpdatedCommands: Type.Optional(Type.Boolean()),
  returnNotifications: Type.Optional(Type.Boolean())
}

/** Registered from routes/index.ts; `proxyEndpoint` comes from the shared URL helper (plugin proxy P1). */
export function pluginRoutes (app: App, hub: DeviceHub): void {
  app.get('/plugin', {
    config: { action: Action.ManagePlugin },
    schema: {
      tags: ['plugin'],
      summary: 'List plugins (non-admins: their own)',
      security: [{ bearer: [] }],
      querystring: ListQuery,
      response: { 200: Type.Array(PluginView), ...errorResponses }
    }
  }, async (request) => hub.plugins.list(request.principal, request.query))

  app.get('/plugin/count', {
    config: { action: Action.ManagePlugin },
    schema: {
      tags: ['plugin'],
      summary: 'Count plugins',
      security: [{ bearer: [] }],
      querystring: ListQuery,
      response: { 200: Count, ...errorResponses }
    }
  }, async (request) => hub.plugins.count(request.principal, request.query))

  app.post('/plugin', {
    config: { action: Action.ManagePlugin },
    schema: {
      tags: ['plugin'],
      summary: 'Register a plugin: a named subscription with its own tokens',
      security: [{ bearer: [] }],
      querystring: Type.Object(filterQuery),
      body: PluginCreateBody,
      response: { 201: PluginRegistration, ...errorResponses }
    }
  }, async (request, reply) => {
    const registration = await hub.plugins.create(request.principal, {
      query: request.query,
      body: request.body,
      proxyEndpoint: pluginProxyUrl(app, request)
    })
    return reply.code(201).send(registration)
  })

  app.put('/plugin', {
    config: { action: Action.ManagePlugin },
    schema: {
      tags: ['plugin'],
      summary: 'Change a plugin: status (ACTIVE/INACTIVE), name, description, parameters, filter',
      security: [{ bearer: [] }],
      querystring: Type.Object({
        topicName: Type.Optional(Type.String()),
        status: Type.Optional(Type.String({ description: 'ACTIVE or INACTIVE' })),
        name: Type.Optional(Type.String()),
        description: Type.Optional(Type.String()),
        parameters: Type.Optional(Type.String({ description: 'A JSON object' })),
        ...filterQuery
      }),
      response: { 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    await hub.plugins.update(request.principal, request.query)
    return reply.code(204).send(null)
  })

  app.delete('/plugin', {
    config: { action: Action.ManagePlugin },
    schema: {
      tags: ['plugin'],
      summary: 'Delete a plugin',
      security: [{ bearer: [] }],
      querystring: Type.Object({ topicName: Type.Optional(Type.String()) }),
      response: { 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    await hub.plugins.delete(request.principal, request.query.topicName)
    return reply.code(204).send(null)
  })
}
