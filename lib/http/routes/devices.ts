/** `/device` list, count, get, register (PUT) and delete (spec §5.1-§5.5). */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { DeviceBody, DeviceView } from '../../core/devices/device-schemas.js'
import { Messages } from '../../core/errors.js'
import { Count, IntegerId, errorResponses, ListPaging } from '../schemas.js'
import type { App } from '../types.js'

const Filter = {
  name: Type.Optional(Type.String()),
  namePattern: Type.Optional(Type.String({ maxLength: 1000 })),
  // devicehub extension; its length is checked by the service, for a message that says so.
  search: Type.Optional(Type.String({ description: 'devicehub: case-insensitive text the name or the id contains' })),
  networkId: Type.Optional(IntegerId),
  networkName: Type.Optional(Type.String()),
  deviceTypeId: Type.Optional(IntegerId),
  deviceTypeName: Type.Optional(Type.String()),
  online: Type.Optional(Type.Boolean())
}
const ListQuery = Type.Object({
  ...Filter,
  ...ListPaging
})
const IdParams = Type.Object({ id: Type.String() })

export function deviceRoutes (app: App, hub: DeviceHub): void {
  const security = [{ bearer: [] }]

  app.get('/device', {
    config: { action: Action.GetDevice },
    schema: {
      tags: ['device'], summary: 'List devices in scope', security, querystring: ListQuery,
      response: { 200: Type.Array(DeviceView), ...errorResponses }
    }
  }, async (request) => hub.devices.list(request.principal, request.query))

  app.get('/device/count', {
    config: { action: Action.GetDevice },
    schema: {
      tags: ['device'], summary: 'Count devices in scope', security, querystring: Type.Object(Filter),
      response: { 200: Count, ...errorResponses }
    }
  }, async (request) => hub.devices.count(request.principal, request.query))

  app.get('/device/:id', {
    config: { action: Action.GetDevice },
    schema: { tags: ['device'], summary: 'Read a device', security, params: IdParams, response: { 200: DeviceView, ...errorResponses } }
  }, async (request) => hub.devices.get(request.principal, request.params.id))

  app.put('/device/:id', {
    config: { action: Action.RegisterDevice, validationMessages: { '/data': Messages.notJsonObject } },
    schema: {
      tags: ['device'], summary: 'Register or update a device', security, params: IdParams, body: DeviceBody,
      response: { 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    await hub.devices.register(request.principal, request.params.id, request.body)
    return reply.code(204).send(null)
  })

  app.delete('/device/:id', {
    config: { action: Action.RegisterDevice },
    schema: { tags: ['device'], summary: 'Delete a device', security, params: IdParams, response: { 204: Type.Null(), ...errorResponses } }
  }, async (request, reply) => {
    await hub.devices.delete(request.principal, request.params.id)
    return reply.code(204).send(null)
  })
}
