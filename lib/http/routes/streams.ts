/**
 * Server-Sent Events (a devicehub extension; no DeviceHive server has it): the third transport
 * over the core subscribe operations, next to long polls and WebSocket subscriptions. Query
 * parameters as the polls (CSV lists, `timestamp` = strictly after), scope rules as WebSocket
 * subscriptions; each event's `id` is the item's cursor, `Last-Event-ID` resumes after it.
 */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { parsePollQuery } from '../poll-query.js'
import { resumeCursor, sendEventStream } from '../sse.js'
import { errorResponses } from '../schemas.js'
import type { App } from '../types.js'

const security = [{ bearer: [] }]
const DeviceParams = Type.Object({ deviceId: Type.String() })

const Common = {
  names: Type.Optional(Type.String({ description: 'CSV of names' })),
  timestamp: Type.Optional(Type.String({ description: 'cursor: items strictly after it (the Last-Event-ID header wins)' }))
}
const Many = {
  deviceId: Type.Optional(Type.String()),
  deviceIds: Type.Optional(Type.String({ description: 'CSV of device ids' })),
  networkIds: Type.Optional(Type.String({ description: 'CSV of network ids' })),
  deviceTypeIds: Type.Optional(Type.String({ description: 'CSV of device type ids' }))
}
const Updated = { returnUpdatedCommands: Type.Optional(Type.Boolean({ description: 'stream command updates instead of inserts' })) }

function eventStream (what: string): object {
  return {
    200: {
      description: `A text/event-stream: one event per ${what}, \`id\` = its cursor (epoch ms), \`data\` = its JSON. ` +
        'Reconnect with Last-Event-ID to resume with nothing lost or repeated.',
      content: { 'text/event-stream': { schema: Type.String() } }
    },
    ...errorResponses
  }
}

export function streamRoutes (app: App, hub: DeviceHub): void {
  app.get('/device/notification/stream', {
    config: { action: Action.GetDeviceNotification },
    schema: {
      tags: ['notifications'],
      summary: 'Stream notifications of many devices (Server-Sent Events)',
      security,
      querystring: Type.Object({ ...Common, ...Many }),
      response: eventStream('notification')
    }
  }, async (request, reply) => {
    const { query } = request
    const after = resumeCursor(request, query.timestamp)
    const { deviceIds, networkIds, deviceTypeIds, names } = parsePollQuery(query)
    const stream = await hub.notifications.subscribe(request.principal, {
      deviceId: query.deviceId,
      deviceIds,
      networkIds,
      deviceTypeIds,
      names,
      after,
      backlogLimit: Number.POSITIVE_INFINITY
    })
    sendEventStream(reply, stream)
  })

  app.get('/device/:deviceId/notification/stream', {
    config: { action: Action.GetDeviceNotification },
    schema: {
      tags: ['notifications'],
      summary: 'Stream notifications of one device (Server-Sent Events)',
      security,
      params: DeviceParams,
      querystring: Type.Object(Common),
      response: eventStream('notification')
    }
  }, async (request, reply) => {
    const after = resumeCursor(request, request.query.timestamp)
    const stream = await hub.notifications.subscribe(request.principal, {
      deviceId: request.params.deviceId,
      names: parsePollQuery(request.query).names,
      after,
      backlogLimit: Number.POSITIVE_INFINITY
    })
    sendEventStream(reply, stream)
  })

  app.get('/device/command/stream', {
    config: { action: Action.GetDeviceCommand },
    schema: {
      tags: ['commands'],
      summary: 'Stream commands (or command updates) of many devices (Server-Sent Events)',
      security,
      querystring: Type.Object({ ...Common, ...Many, ...Updated }),
      response: eventStream('command')
    }
  }, async (request, reply) => {
    const { query } = request
    const after = resumeCursor(request, query.timestamp)
    const { deviceIds, networkIds, deviceTypeIds, names } = parsePollQuery(query)
    const stream = await hub.commands.subscribe(request.principal, {
      deviceId: query.deviceId,
      deviceIds,
      networkIds,
      deviceTypeIds,
      names,
      returnUpdatedCommands: query.returnUpdatedCommands,
      after,
      backlogLimit: Number.POSITIVE_INFINITY
    })
    sendEventStream(reply, stream)
  })

  app.get('/device/:deviceId/command/stream', {
    config: { action: Action.GetDeviceCommand },
    schema: {
      tags: ['commands'],
      summary: 'Stream commands (or command updates) of one device (Server-Sent Events)',
      security,
      params: DeviceParams,
      querystring: Type.Object({ ...Common, ...Updated }),
      response: eventStream('command')
    }
  }, async (request, reply) => {
    const after = resumeCursor(request, request.query.timestamp)
    const stream = await hub.commands.subscribe(request.principal, {
      deviceId: request.params.deviceId,
      names: parsePollQuery(request.query).names,
      returnUpdatedCommands: request.query.returnUpdatedCommands,
      after,
      backlogLimit: Number.POSITIVE_INFINITY
    })
    sendEventStream(reply, stream)
  })
}
