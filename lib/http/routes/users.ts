/** `/user`, `/user/current` and the user <-> network / device-type links (spec §5.8-§5.10). */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { NamedEntityView } from '../../core/networks/network-schemas.js'
import { UserBody, UserCreatedView, UserDeviceTypeView, UserListView, UserNetworkView, UserView } from '../../core/users/user-schemas.js'
import { Count, PathId, errorResponses, ListPaging, Int32 } from '../schemas.js'
import type { App } from '../types.js'

const Filter = {
  login: Type.Optional(Type.String()),
  loginPattern: Type.Optional(Type.String({ maxLength: 1000 })),
  role: Type.Optional(Int32),
  status: Type.Optional(Int32)
}
const ListQuery = Type.Object({
  ...Filter,
  ...ListPaging
})
const IdParams = Type.Object({ id: PathId })
const NetworkParams = Type.Object({ id: PathId, networkId: PathId })
const DeviceTypeParams = Type.Object({ id: PathId, deviceTypeId: PathId })
const NoContent = { 204: Type.Null(), ...errorResponses }

export function userRoutes (app: App, hub: DeviceHub): void {
  const security = [{ bearer: [] }]
  const users = hub.users

  app.get('/user', {
    config: { action: Action.ManageUser },
    schema: {
      tags: ['user'], summary: 'List users', security, querystring: ListQuery,
      response: { 200: Type.Array(UserListView), ...errorResponses }
    }
  }, async (request) => users.list(request.principal, request.query))

  app.get('/user/count', {
    config: { action: Action.ManageUser },
    schema: {
      tags: ['user'], summary: 'Count users', security, querystring: Type.Object(Filter), response: { 200: Count, ...errorResponses }
    }
  }, async (request) => users.count(request.principal, request.query))

  app.get('/user/current', {
    config: { action: Action.GetCurrentUser },
    schema: { tags: ['user'], summary: 'The caller, with its networks', security, response: { 200: UserView, ...errorResponses } }
  }, async (request) => users.current(request.principal))

  app.put('/user/current', {
    config: { action: Action.UpdateCurrentUser, validationMessages: { '/data': "'parameters' must be JSON Object!" } },
    schema: { tags: ['user'], summary: 'Update the caller', security, body: UserBody, response: NoContent }
  }, async (request, reply) => {
    await users.updateCurrent(request.principal, request.body)
    return reply.code(204).send(null)
  })

  app.get('/user/:id', {
    config: { action: Action.ManageUser },
    schema: {
      tags: ['user'], summary: 'Read a user, with its networks', security, params: IdParams, response: { 200: UserView, ...errorResponses }
    }
  }, async (request) => users.get(request.principal, request.params.id))

  app.post('/user', {
    config: { action: Action.ManageUser },
    schema: { tags: ['user'], summary: 'Create a user', security, body: UserBody, response: { 201: UserCreatedView, ...errorResponses } }
  }, async (request, reply) => reply.code(201).send(await users.create(request.principal, request.body)))

  app.put('/user/:id', {
    config: { action: Action.ManageUser },
    schema: { tags: ['user'], summary: 'Update a user', security, params: IdParams, body: UserBody, response: NoContent }
  }, async (request, reply) => {
    await users.update(request.principal, request.params.id, request.body)
    return reply.code(204).send(null)
  })

  app.delete('/user/:id', {
    config: { action: Action.ManageUser },
    schema: { tags: ['user'], summary: 'Delete a user', security, params: IdParams, response: NoContent }
  }, async (request, reply) => {
    await users.delete(request.principal, request.params.id)
    return reply.code(204).send(null)
  })

  app.get('/user/:id/network/:networkId', {
    config: { action: Action.GetNetwork },
    schema: {
      tags: ['user'], summary: 'A network assigned to a user', security, params: NetworkParams,
      response: { 200: UserNetworkView, ...errorResponses }
    }
  }, async (request) => users.getNetwork(request.principal, request.params.id, request.params.networkId))

  app.put('/user/:id/network/:networkId', {
    config: { action: Action.ManageNetwork },
    schema: { tags: ['user'], summary: 'Assign a network to a user', security, params: NetworkParams, response: NoContent }
  }, async (request, reply) => {
    await users.assignNetwork(request.principal, request.params.id, request.params.networkId)
    return reply.code(204).send(null)
  })

  app.delete('/user/:id/network/:networkId', {
    config: { action: Action.ManageNetwork },
    schema: { tags: ['user'], summary: 'Unassign a network from a user', security, params: NetworkParams, response: NoContent }
  }, async (request, reply) => {
    await users.unassignNetwork(request.principal, request.params.id, request.params.networkId)
    return reply.code(204).send(null)
  })

  app.get('/user/:id/devicetype', {
    config: { action: Action.ManageDeviceType },
    schema: {
      tags: ['user'], summary: 'Device types available to a user', security, params: IdParams,
      response: { 200: Type.Array(NamedEntityView), ...errorResponses }
    }
  }, async (request) => users.listDeviceTypes(request.principal, request.params.id))

  app.put('/user/:id/devicetype/all', {
    config: { action: Action.ManageDeviceType },
    schema: { tags: ['user'], summary: 'Allow every device type to a user', security, params: IdParams, response: NoContent }
  }, async (request, reply) => {
    await users.allowAllDeviceTypes(request.principal, request.params.id)
    return reply.code(204).send(null)
  })

  app.delete('/user/:id/devicetype/all', {
    config: { action: Action.ManageDeviceType },
    schema: { tags: ['user'], summary: 'Restrict a user to assigned device types', security, params: IdParams, response: NoContent }
  }, async (request, reply) => {
    await users.disallowAllDeviceTypes(request.principal, request.params.id)
    return reply.code(204).send(null)
  })

  app.get('/user/:id/devicetype/:deviceTypeId', {
    config: { action: Action.GetDeviceType },
    schema: {
      tags: ['user'], summary: 'A device type available to a user', security, params: DeviceTypeParams,
      response: { 200: UserDeviceTypeView, ...errorResponses }
    }
  }, async (request) => users.getDeviceType(request.principal, request.params.id, request.params.deviceTypeId))

  app.put('/user/:id/devicetype/:deviceTypeId', {
    config: { action: Action.ManageDeviceType },
    schema: { tags: ['user'], summary: 'Assign a device type to a user', security, params: DeviceTypeParams, response: NoContent }
  }, async (request, reply) => {
    await users.assignDeviceType(request.principal, request.params.id, request.params.deviceTypeId)
    return reply.code(204).send(null)
  })

  app.delete('/user/:id/devicetype/:deviceTypeId', {
    config: { action: Action.ManageDeviceType },
    schema: { tags: ['user'], summary: 'Unassign a device type from a user', security, params: DeviceTypeParams, response: NoContent }
  }, async (request, reply) => {
    await users.unassignDeviceType(request.principal, request.params.id, request.params.deviceTypeId)
    return reply.code(204).send(null)
  })
}
