/** `/network` and, through the same builder, `/devicetype` (spec §5.6, §5.7). */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import type { NamedEntityService } from '../../core/networks/named-entity-service.js'
import { NamedEntityBody, NamedEntityView, NamedEntityWithDevices } from '../../core/networks/network-schemas.js'
import { Count, PathId, errorResponses, ListPaging } from '../schemas.js'
import type { App } from '../types.js'

// The views and the body are the core's (one schema each for REST, WebSocket and OpenAPI).
const Created = Type.Object({ id: Type.Integer() })
const IdParams = Type.Object({ id: PathId })
const Filter = {
  name: Type.Optional(Type.String()),
  namePattern: Type.Optional(Type.String({ maxLength: 1000 }))
}
const ListQuery = Type.Object({
  ...Filter,
  ...ListPaging
})

export interface NamedEntityRouteOptions {
  path: string
  tag: string
  getAction: Action
  manageAction: Action
}

/**
 * Registers list, count, get, create, update and delete for one named entity.
 *
 * @example
 * namedEntityRoutes(app, hub.networks, {
 *   path: '/network', tag: 'network', getAction: Action.GetNetwork, manageAction: Action.ManageNetwork
 * })
 */
export function namedEntityRoutes (app: App, service: NamedEntityService, options: NamedEntityRouteOptions): void {
  const { path, tag, getAction, manageAction } = options
  const security = [{ bearer: [] }]

  app.get(path, {
    config: { action: getAction },
    schema: {
      tags: [tag], summary: `List ${tag}s in scope`, security, querystring: ListQuery,
      response: { 200: Type.Array(NamedEntityView), ...errorResponses }
    }
  }, async (request) => service.list(request.principal, request.query))

  app.get(`${path}/count`, {
    config: { action: getAction },
    schema: {
      tags: [tag], summary: `Count ${tag}s in scope`, security, querystring: Type.Object(Filter),
      response: { 200: Count, ...errorResponses }
    }
  }, async (request) => service.count(request.principal, request.query))

  app.get(`${path}/:id`, {
    config: { action: getAction },
    schema: {
      tags: [tag], summary: `Read a ${tag} with its devices`, security, params: IdParams,
      response: { 200: NamedEntityWithDevices, ...errorResponses }
    }
  }, async (request) => service.get(request.principal, request.params.id))

  app.post(path, {
    config: { action: manageAction },
    schema: { tags: [tag], summary: `Create a ${tag}`, security, body: NamedEntityBody, response: { 201: Created, ...errorResponses } }
  }, async (request, reply) => reply.code(201).send(await service.create(request.principal, request.body)))

  app.put(`${path}/:id`, {
    config: { action: manageAction },
    schema: {
      tags: [tag], summary: `Update a ${tag}`, security, params: IdParams, body: NamedEntityBody,
      response: { 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    await service.update(request.principal, request.params.id, request.body)
    return reply.code(204).send(null)
  })

  app.delete(`${path}/:id`, {
    config: { action: manageAction },
    schema: {
      tags: [tag],
      summary: `Delete a ${tag} (force=true also deletes its devices)`,
      security,
      params: IdParams,
      querystring: Type.Object({ force: Type.Optional(Type.Boolean()) }),
      response: { 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    await service.delete(request.principal, request.params.id, request.query.force === true)
    return reply.code(204).send(null)
  })
}

export function networkRoutes (app: App, hub: DeviceHub): void {
  namedEntityRoutes(
    app, hub.networks, { path: '/network', tag: 'network', getAction: Action.GetNetwork, manageAction: Action.ManageNetwork }
  )
}
