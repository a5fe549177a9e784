/** Device notifications: query, get, insert, long polls (spec §6.9-§6.13). */
import { Type } from 'typebox'
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { parsePollQuery } from '../poll-query.js'
import { clientGone } from '../request-signal.js'
import { NotificationInsertBody, NotificationInsertView, NotificationView } from '../../core/notifications/notification-schemas.js'
import { errorResponses, MessagePaging } from '../schemas.js'
import type { App } from '../types.js'

// The wire shapes are the core's (one schema each for REST, WebSocket and OpenAPI).
const Notification = NotificationView
const NotificationInsert = NotificationInsertView
const DeviceParams = Type.Object({ deviceId: Type.String() })
const PollQuery = {
  names: Type.Optional(Type.String({ description: 'CSV of notification names' })),
  timestamp: Type.Optional(Type.String({ description: 'cursor: notifications strictly after it' })),
  waitTimeout: Type.Optional(Type.Integer({ description: 'seconds, 0..60, default 30' })),
  limit: Type.Optional(Type.Integer({ description: 'backlog cap, default 100; 0 = no limit (up to --max-take)' }))
}

const tags = ['notifications']
const security = [{ bearer: [] }]

export function notificationRoutes (app: App, hub: DeviceHub): void {
  // The poll handlers return the service's promise as is (no async wrapper): thousands may be
  // parked, and each wrapper keeps one more promise for the whole wait.
  app.get('/device/notification/poll', {
    config: { action: Action.GetDeviceNotification },
    schema: {
      tags,
      summary: 'Long-poll for notifications of many devices',
      security,
      querystring: Type.Object({
        ...PollQuery,
        deviceId: Type.Optional(Type.String()),
        deviceIds: Type.Optional(Type.String({ description: 'CSV of device ids (R2)' })),
        networkIds: Type.Optional(Type.String({ description: 'CSV of network ids' })),
        deviceTypeIds: Type.Optional(Type.String({ description: 'CSV of device type ids' }))
      }),
      response: { 200: Type.Array(Notification), ...errorResponses }
    }
  }, (request, reply) => hub.notifications.pollMany(
    request.principal, { ...parsePollQuery(request.query), signal: clientGone(reply) }
  ))

  app.get('/device/:deviceId/notification/poll', {
    config: { action: Action.GetDeviceNotification },
    schema: {
      tags,
      summary: 'Long-poll for notifications of one device',
      security,
      params: DeviceParams,
      querystring: Type.Object(PollQuery),
      response: { 200: Type.Array(Notification), ...errorResponses }
    }
  }, (request, reply) => hub.notifications.poll(
    request.principal, { ...parsePollQuery(request.query), deviceId: request.params.deviceId, signal: clientGone(reply) }
  ))

  app.get('/device/:deviceId/notification', {
    config: { action: Action.GetDeviceNotification },
    schema: {
      tags,
      summary: 'Query the notifications of a device',
      security,
      params: DeviceParams,
      querystring: Type.Object({
        start: Type.Optional(Type.String()),
        end: Type.Optional(Type.String()),
        notification: Type.Optional(Type.String()),
        ...MessagePaging
      }),
      response: { 200: Type.Array(Notification), ...errorResponses }
    }
  }, async (request) => hub.notifications.query(request.principal, { ...request.query, deviceId: request.params.deviceId }))

  app.get('/device/:deviceId/notification/:id', {
    config: { action: Action.GetDeviceNotification },
    schema: {
      tags,
      summary: 'Get one notification',
      security,
      params: Type.Object({ deviceId: Type.String(), id: Type.String() }),
      response: { 200: Notification, ...errorResponses }
    }
  }, async (request) => hub.notifications.get(request.principal, request.params))

  app.post('/device/:deviceId/notification', {
    config: { action: Action.CreateDeviceNotification },
    schema: {
      tags,
      summary: 'Send a notification from a device',
      security,
      params: DeviceParams,
      body: NotificationInsertBody,
      response: { 201: NotificationInsert, ...errorResponses }
    }
  }, async (request, reply) => {
    const view = await hub.notifications.insert(request.principal, { deviceId: request.params.deviceId, body: request.body })
    return reply.code(201).send(view)
  })
}
