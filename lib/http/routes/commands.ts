/** Device commands: query, get, insert, update, long polls, wait (spec §6.2-§6.8). */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { parsePollQuery } from '../poll-query.js'
import { clientGone } from '../request-signal.js'
import { CommandInsertBody, CommandInsertView, CommandUpdateBody, CommandView } from '../../core/commands/command-schemas.js'
import { errorResponses, MessagePaging } from '../schemas.js'
import type { App } from '../types.js'

// The polls, the wait and the update build their input field by field instead of spreading
// `request.params` or `request.query`: those have no prototype, and spreading one takes V8's
// slow path, 1-5 µs per request (issue #26; the queries keep the spread, beside their read).
// The wire shapes are the core's (one schema each for REST, WebSocket and OpenAPI).
const Command = CommandView
const CommandInsert = CommandInsertView
const DeviceParams = Type.Object({ deviceId: Type.String() })
const CommandParams = Type.Object({ deviceId: Type.String(), commandId: Type.String() })
const WaitTimeout = Type.Integer({ description: 'seconds, 0..60, default 30' })

const PollQuery = {
  names: Type.Optional(Type.String({ description: 'CSV of command names' })),
  timestamp: Type.Optional(Type.String({ description: 'cursor: commands strictly after it' })),
  waitTimeout: Type.Optional(WaitTimeout),
  limit: Type.Optional(Type.Integer({ description: 'backlog cap, default 100; 0 = no limit (up to --max-take)' }))
}

const tags = ['commands']
const security = [{ bearer: [] }]

export function commandRoutes (app: App, hub: DeviceHub): void {
  app.get('/device/command/poll', {
    config: { action: Action.GetDeviceCommand },
    schema: {
      tags,
      summary: 'Long-poll for commands of many devices',
      security,
      querystring: Type.Object({
        ...PollQuery,
        deviceId: Type.Optional(Type.String()),
        deviceIds: Type.Optional(Type.String({ description: 'CSV of device ids (R2)' })),
        networkIds: Type.Optional(Type.String({ description: 'CSV of network ids' })),
        deviceTypeIds: Type.Optional(Type.String({ description: 'CSV of device type ids' })),
        returnUpdatedCommands: Type.Optional(Type.Boolean())
      }),
      response: { 200: Type.Array(Command), ...errorResponses }
    }
  }, (request, reply) => hub.commands.pollMany(
    request.principal, { ...parsePollQuery(request.query), signal: clientGone(reply) }
  ))

  app.get('/device/:deviceId/command/poll', {
    config: { action: Action.GetDeviceCommand },
    schema: {
      tags,
      summary: 'Long-poll for commands of one device',
      security,
      params: DeviceParams,
      querystring: Type.Object({ ...PollQuery, returnUpdatedCommands: Type.Optional(Type.Boolean()) }),
      response: { 200: Type.Array(Command), ...errorResponses }
    }
  }, (request, reply) => hub.commands.poll(
    request.principal, { ...parsePollQuery(request.query), deviceId: request.params.deviceId, signal: clientGone(reply) }
  ))

  app.get('/device/:deviceId/command/:commandId/poll', {
    config: { action: Action.GetDeviceCommand },
    schema: {
      tags,
      summary: 'Wait until a command is updated',
      security,
      params: CommandParams,
      querystring: Type.Object({ waitTimeout: Type.Optional(WaitTimeout) }),
      response: { 200: Command, 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    const { deviceId, commandId } = request.params
    const command = await hub.commands.wait(
      request.principal, { deviceId, commandId, waitTimeout: request.query.waitTimeout, signal: clientGone(reply) }
    )
    if (command === null) return reply.code(204).send(null)
    return command
  })

  app.get('/device/:deviceId/command', {
    config: { action: Action.GetDeviceCommand },
    schema: {
      tags,
      summary: 'Query the commands of a device',
      security,
      params: DeviceParams,
      querystring: Type.Object({
        start: Type.Optional(Type.String()),
        end: Type.Optional(Type.String()),
        command: Type.Optional(Type.String()),
        status: Type.Optional(Type.String()),
        ...MessagePaging
      }),
      response: { 200: Type.Array(Command), ...errorResponses }
    }
  }, async (request) => hub.commands.query(request.principal, { ...request.query, deviceId: request.params.deviceId }))

  app.get('/device/:deviceId/command/:commandId', {
    config: { action: Action.GetDeviceCommand },
    schema: {
      tags,
      summary: 'Get one command',
      security,
      params: CommandParams,
      querystring: Type.Object({ returnUpdatedCommands: Type.Optional(Type.Boolean()) }),
      response: { 200: Command, ...errorResponses }
    }
  }, async (request) => {
    const { deviceId, commandId } = request.params
    return hub.commands.get(request.principal, { deviceId, commandId, returnUpdatedCommands: request.query.returnUpdatedCommands })
  })

  app.post('/device/:deviceId/command', {
    config: { action: Action.CreateDeviceCommand },
    schema: {
      tags,
      summary: 'Send a command to a device',
      security,
      params: DeviceParams,
      body: CommandInsertBody,
      response: { 201: CommandInsert, ...errorResponses }
    }
  }, async (request, reply) => {
    const view = await hub.commands.insert(request.principal, { deviceId: request.params.deviceId, body: request.body })
    return reply.code(201).send(view)
  })

  app.put('/device/:deviceId/command/:commandId', {
    config: { action: Action.UpdateDeviceCommand },
    schema: {
      tags,
      summary: 'Report a command\'s status and result',
      security,
      params: CommandParams,
      body: CommandUpdateBody,
      response: { 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    const { deviceId, commandId } = request.params
    await hub.commands.update(request.principal, { deviceId, commandId, body: request.body })
    return reply.code(204).send(null)
  })
}
