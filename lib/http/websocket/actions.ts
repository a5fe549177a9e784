/**
 * The action catalogue of the WebSocket API (auth spec §6.3-§6.5): each action reads its fields
 * into the core's inputs and calls the same core operation as the REST route, so permissions,
 * scope (D7) and messages are the REST ones. Entity payloads are first read with the R12 rules
 * and the REST body schemas ({@link ENTITY_PAYLOADS}), so they are as lenient as REST bodies.
 * Replies are the result fields of §6.4.
 */
import { Action } from '../../core/auth/actions.js'
import { requireAction } from '../../core/auth/permissions.js'
import type { Principal } from '../../core/auth/principal.js'
import { Compile } from 'typebox/compile'
import { TokenCreateBody } from '../../core/auth/auth-schemas.js'
import { CommandInsertBody, CommandUpdateBody } from '../../core/commands/command-schemas.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { DeviceBody } from '../../core/devices/device-schemas.js'
import { NamedEntityBody } from '../../core/networks/network-schemas.js'
import { NotificationInsertBody } from '../../core/notifications/notification-schemas.js'
import { UserBody } from '../../core/users/user-schemas.js'
import { badRequest, forbidden, notFound, unauthorized } from '../../core/errors.js'
import {
  lenientEntity, optionalBoolean, optionalDeviceId, optionalInteger, optionalIntegers, optionalObject, optionalString, optionalStrings,
  optionalTimestamp, optionalTimestampText, requireDeviceId, requireInteger
} from './fields.js'
import type { RequestFrame } from './frames.js'
import type { ActionSession, SubscriptionKind } from './action-session.js'

export interface ActionContext {
  hub: DeviceHub
  session: ActionSession
  /** The session's principal, re-checked for this action (D10); undefined = anonymous. */
  principal: Principal | undefined
}

export interface ActionHandler {
  /** Public actions run without the D10 re-check (they need no principal). */
  public?: boolean
  run(ctx: ActionContext, frame: RequestFrame): Promise<object | undefined>
}

/** `take` of WebSocket lists defaults to 20 (§6.2, §6.7). */
const DEFAULT_TAKE = 20

function listInput (frame: RequestFrame): { sortField?: string, sortOrder?: string, take: number, skip: number } {
  return {
    sortField: optionalString(frame, 'sortField'),
    sortOrder: optionalString(frame, 'sortOrder'),
    take: optionalInteger(frame, 'take') ?? DEFAULT_TAKE,
    skip: optionalInteger(frame, 'skip') ?? 0
  }
}

function namedFilter (frame: RequestFrame): { name?: string, namePattern?: string } {
  return { name: optionalString(frame, 'name'), namePattern: optionalString(frame, 'namePattern') }
}

function entityBody (frame: RequestFrame, field: string, missing: string): Record<string, unknown> {
  const body = optionalObject(frame, field, missing)
  if (body === undefined) throw badRequest(missing)
  return body
}

// The same schemas as the REST bodies, checked after the R12 rules (ENTITY_PAYLOADS); no other coercion.
const commandInsertBody = Compile(CommandInsertBody)
const commandUpdateBody = Compile(CommandUpdateBody)
const notificationInsertBody = Compile(NotificationInsertBody)

const NETWORK_ID = 'Network id is wrong or empty'
const DEVICE_TYPE_ID = 'Device type id is wrong or empty'
const USER_ID = 'User id is wrong or empty'
const COMMAND_ID = 'Command id is wrong or empty'
const NOTIFICATION_ID = 'Notification id is wrong or empty'
const DEVICE_SORT_FIELDS = new Set(['name', 'status', 'network'])

function namedEntityActions (
  prefix: 'network' | 'devicetype',
  service: (hub: DeviceHub) => DeviceHub['networks'],
  idField: 'networkId' | 'deviceTypeId',
  member: 'network' | 'deviceType',
  listMember: 'networks' | 'deviceTypes',
  messages: { id: string, required: string }
): Record<string, ActionHandler> {
  const get = prefix === 'network' ? Action.GetNetwork : Action.GetDeviceType
  return {
    [`${prefix}/list`]: {
      run: async ({ hub, principal }, f) => {
        requireAction(principal, get)
        return { [listMember]: await service(hub).list(principal, { ...namedFilter(f), ...listInput(f) }) }
      }
    },
    [`${prefix}/count`]: {
      run: async ({ hub, principal }, f) => {
        requireAction(principal, get)
        return service(hub).count(principal, namedFilter(f))
      }
    },
    [`${prefix}/get`]: {
      run: async ({ hub, principal }, f) => {
        requireAction(principal, get)
        return { [member]: await service(hub).get(principal, requireInteger(f, idField, messages.id)) }
      }
    },
    [`${prefix}/insert`]: {
      run: async ({ hub, principal }, f) => {
        requireAction(principal, prefix === 'network' ? Action.ManageNetwork : Action.ManageDeviceType)
        return { [member]: await service(hub).create(principal, entityBody(f, member, messages.required)) }
      }
    },
    [`${prefix}/update`]: {
      run: async ({ hub, principal }, f) => {
        requireAction(principal, prefix === 'network' ? Action.ManageNetwork : Action.ManageDeviceType)
        const id = requireInteger(f, idField, messages.id)
        // Existence and access come before the body, as over REST: a missing entity is `{}`
        // (the service answers 403 / 404 for the id first), only a malformed one is 400.
        await service(hub).update(principal, id, optionalObject(f, member, messages.required) ?? {})
        return undefined
      }
    },
    [`${prefix}/delete`]: {
      run: async ({ hub, principal }, f) => {
        requireAction(principal, prefix === 'network' ? Action.ManageNetwork : Action.ManageDeviceType)
        await service(hub).delete(principal, requireInteger(f, idField, messages.id), optionalBoolean(f, 'force') ?? false)
        return undefined
      }
    }
  }
}

function subscribeInput (frame: RequestFrame): {
  deviceId?: string, networkIds?: number[], deviceTypeIds?: number[], names?: string[], after?: number
} {
  const timestamp = optionalTimestamp(frame, 'timestamp')
  // `deviceIds` (plural) is ignored, as DeviceHive does (§6.5).
  return {
    deviceId: optionalDeviceId(frame),
    networkIds: optionalIntegers(frame, 'networkIds'),
    deviceTypeIds: optionalIntegers(frame, 'deviceTypeIds'),
    names: optionalStrings(frame, 'names'),
    // Backlog items strictly after it, as the REST polls (issue #23): a client that subscribes
    // again with the last timestamp it received gets every later item once, never that one again.
    after: timestamp
  }
}

function unsubscribe (kind: SubscriptionKind, action: Action): ActionHandler {
  return {
    async run ({ session, principal }, f) {
      requireAction(principal, action)
      const id = optionalInteger(f, 'subscriptionId', 'Subscription id is wrong or empty')
      if (id === undefined) session.unsubscribeAll(kind)
      else if (!session.unsubscribe(kind, id)) throw notFound(`Subscription with id ${id} was not found`)
      return undefined
    }
  }
}

/** The catalogue as written, before {@link ENTITY_PAYLOADS} is applied. */
const CATALOGUE: Record<string, ActionHandler> = {
  'server/info': {
    public: true,
    run: async ({ hub, session }) => {
      const { apiVersion, serverTimestamp } = hub.info.info()
      return { info: { apiVersion, serverTimestamp, restServerUrl: session.restServerUrl } }
    }
  },
  'server/cacheInfo': { public: true, run: async ({ hub }) => ({ cacheInfo: hub.info.cache() }) },
  'cluster/info': { public: true, run: async ({ hub }) => ({ clusterInfo: hub.info.cluster() }) },

  token: {
    public: true,
    // Throttled by the client's address like `POST /token`.
    run: async ({ hub, session }, f) => hub.tokens.login(f.login, f.password, { address: session.clientAddress })
  },
  'token/create': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageToken)
      const payload = optionalObject(f, 'payload', 'Missing or invalid payload in request')
      if (payload === undefined) throw badRequest('Missing or invalid payload in request')
      return hub.tokens.createTokens(principal, payload)
    }
  },
  'token/refresh': { public: true, run: async ({ hub }, f) => hub.tokens.refresh(f.refreshToken ?? undefined) },

  'configuration/get': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageConfiguration)
      const name = optionalString(f, 'name')
      if (name === undefined || name === '') throw badRequest('Configuration name is wrong or empty')
      return { configuration: await hub.configuration.get(principal, name) }
    }
  },
  'configuration/put': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageConfiguration)
      const name = optionalString(f, 'name') ?? ''
      return { configuration: await hub.configuration.put(principal, name, { value: f.value }) }
    }
  },
  'configuration/delete': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageConfiguration)
      const name = optionalString(f, 'name')
      if (name === undefined || name === '') throw badRequest('Configuration name is wrong or empty')
      await hub.configuration.delete(principal, name)
      return undefined
    }
  },

  'device/get': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetDevice)
      return { device: await hub.devices.get(principal, requireDeviceId(f)) }
    }
  },
  'device/list': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetDevice)
      const page = listInput(f)
      if (page.sortField !== undefined && !DEVICE_SORT_FIELDS.has(page.sortField.toLowerCase())) throw badRequest()
      return { devices: await hub.devices.list(principal, { ...deviceFilter(f), ...page }) }
    }
  },
  'device/count': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetDevice)
      return hub.devices.count(principal, deviceFilter(f))
    }
  },
  'device/save': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.RegisterDevice)
      const id = requireDeviceId(f)
      await hub.devices.register(principal, id, optionalObject(f, 'device') ?? {})
      return undefined
    }
  },
  'device/delete': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.RegisterDevice)
      await hub.devices.delete(principal, requireDeviceId(f))
      return undefined
    }
  },

  ...namedEntityActions('network', (hub) => hub.networks, 'networkId', 'network', 'networks',
    { id: NETWORK_ID, required: 'Network is required' }),
  ...namedEntityActions('devicetype', (hub) => hub.deviceTypes, 'deviceTypeId', 'deviceType', 'deviceTypes',
    { id: DEVICE_TYPE_ID, required: 'Device type is required' }),

  'user/list': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageUser)
      return { users: await hub.users.list(principal, { ...userFilter(f), ...listInput(f) }) }
    }
  },
  'user/count': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageUser)
      return hub.users.count(principal, userFilter(f))
    }
  },
  'user/get': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageUser)
      return { user: await hub.users.get(principal, requireInteger(f, 'userId', USER_ID)) }
    }
  },
  'user/insert': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageUser)
      return { user: await hub.users.create(principal, entityBody(f, 'user', 'User is required')) }
    }
  },
  'user/update': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageUser)
      await hub.users.update(principal, requireInteger(f, 'userId', USER_ID), entityBody(f, 'user', 'User is required'))
      return undefined
    }
  },
  'user/getCurrent': { run: async ({ hub, principal }) => ({ current: await hub.users.current(principal) }) },
  'user/updateCurrent': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.UpdateCurrentUser)
      await hub.users.updateCurrent(principal, entityBody(f, 'user', 'User is required'))
      return undefined
    }
  },
  'user/delete': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageUser)
      await hub.users.delete(principal, requireInteger(f, 'userId', USER_ID))
      return undefined
    }
  },
  'user/getNetwork': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetNetwork)
      const userId = requireInteger(f, 'userId', USER_ID)
      return { network: await hub.users.getNetwork(principal, userId, requireInteger(f, 'networkId', NETWORK_ID)) }
    }
  },
  'user/assignNetwork': userLink(Action.ManageNetwork, 'networkId', NETWORK_ID, (hub, p, u, id) => hub.users.assignNetwork(p, u, id)),
  'user/unassignNetwork': userLink(Action.ManageNetwork, 'networkId', NETWORK_ID, (hub, p, u, id) => hub.users.unassignNetwork(p, u, id)),
  'user/getDeviceType': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetDeviceType)
      const userId = requireInteger(f, 'userId', USER_ID)
      return { deviceType: await hub.users.getDeviceType(principal, userId, requireInteger(f, 'deviceTypeId', DEVICE_TYPE_ID)) }
    }
  },
  'user/getDeviceTypes': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageDeviceType)
      return { deviceTypes: await hub.users.listDeviceTypes(principal, requireInteger(f, 'userId', USER_ID)) }
    }
  },
  'user/assignDeviceType': userLink(
    Action.ManageDeviceType, 'deviceTypeId', DEVICE_TYPE_ID, (hub, p, u, id) => hub.users.assignDeviceType(p, u, id)
  ),
  'user/unassignDeviceType': userLink(Action.ManageDeviceType, 'deviceTypeId', DEVICE_TYPE_ID,
    (hub, p, u, id) => hub.users.unassignDeviceType(p, u, id)),
  'user/allowAllDeviceTypes': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageDeviceType)
      await hub.users.allowAllDeviceTypes(principal, requireInteger(f, 'userId', USER_ID))
      return undefined
    }
  },
  'user/disallowAllDeviceTypes': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.ManageDeviceType)
      await hub.users.disallowAllDeviceTypes(principal, requireInteger(f, 'userId', USER_ID))
      return undefined
    }
  },

  'command/insert': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.CreateDeviceCommand)
      const deviceId = requireDeviceId(f)
      const body = optionalObject(f, 'command', 'Command is required')
      if (body === undefined) throw badRequest('Command is required')
      if (!commandInsertBody.Check(body)) throw badRequest()
      if (body.command === undefined || body.command === '') throw badRequest('Command is required')
      return { command: await hub.commands.insert(principal, { deviceId, body }) }
    }
  },
  'command/update': {
    run: async ({ hub, principal, session }, f) => {
      requireAction(principal, Action.UpdateDeviceCommand)
      const commandId = requireInteger(f, 'commandId', COMMAND_ID)
      const deviceId = requireDeviceId(f)
      const { status, result, parameters } = optionalObject(f, 'command') ?? {}
      // Other members of the command object are ignored (§6.4), but for MQTT's parameters.
      const body = { status, result }
      if (!commandUpdateBody.Check(body)) throw badRequest()
      const replaces = session.updatesCommandParameters && parameters !== undefined
      await hub.commands.update(principal, { deviceId, commandId: String(commandId), body, ...(replaces ? { parameters } : {}) })
      return undefined
    }
  },
  'command/get': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetDeviceCommand)
      const deviceId = requireDeviceId(f)
      const commandId = requireInteger(f, 'commandId', COMMAND_ID)
      return { command: await hub.commands.get(principal, { deviceId, commandId: String(commandId) }) }
    }
  },
  'command/list': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetDeviceCommand)
      const deviceId = requireDeviceId(f)
      return {
        commands: await hub.commands.query(principal, {
          deviceId,
          ...messageQuery(f, 'command'),
          status: optionalString(f, 'status')
        })
      }
    }
  },
  'command/subscribe': {
    run: async ({ hub, principal, session }, f) => {
      requireAction(principal, Action.GetDeviceCommand)
      const input = subscribeInput(f)
      const returnUpdatedCommands = optionalBoolean(f, 'returnUpdatedCommands') ?? false
      const limit = optionalInteger(f, 'limit')
      if (limit !== undefined && limit < 0) throw badRequest('Limit can\'t be less than 0.')
      const stream = await hub.commands.subscribe(principal, { ...input, returnUpdatedCommands, backlogLimit: limit })
      return session.addSubscription('command', stream, f, { ...input, returnUpdatedCommands })
    }
  },
  'command/unsubscribe': unsubscribe('command', Action.GetDeviceCommand),

  'notification/insert': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.CreateDeviceNotification)
      const deviceId = requireDeviceId(f)
      const body = optionalObject(f, 'notification', 'Notification is required')
      if (body === undefined || typeof body.notification !== 'string' || body.notification === '') {
        throw badRequest('Notification is required')
      }
      if (!notificationInsertBody.Check(body)) throw badRequest()
      return { notification: await hub.notifications.insert(principal, { deviceId, body }) }
    }
  },
  'notification/get': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetDeviceNotification)
      const deviceId = requireDeviceId(f)
      const id = requireInteger(f, 'notificationId', NOTIFICATION_ID, 'Notification id should be an integer value.')
      // 404 for a missing device whoever asks (spec §4.4, §7 item 8); REST and command/* keep D7's 403.
      return { notification: await hub.notifications.get(principal, { deviceId, id: String(id) }, 'found') }
    }
  },
  'notification/list': {
    run: async ({ hub, principal }, f) => {
      requireAction(principal, Action.GetDeviceNotification)
      const deviceId = requireDeviceId(f)
      return { notifications: await hub.notifications.query(principal, { deviceId, ...messageQuery(f, 'notification') }, 'found') }
    }
  },
  'notification/subscribe': {
    run: async ({ hub, principal, session }, f) => {
      requireAction(principal, Action.GetDeviceNotification)
      const input = subscribeInput(f)
      const stream = await hub.notifications.subscribe(principal, input)
      return session.addSubscription('notification', stream, f, input)
    }
  },
  'notification/unsubscribe': unsubscribe('notification', Action.GetDeviceNotification),

  'subscription/list': {
    run: async ({ principal, session }, f) => {
      if (principal === undefined) throw unauthorized()
      if (!principal.actions.has(Action.GetDeviceCommand) && !principal.actions.has(Action.GetDeviceNotification)) throw forbidden()
      const type = optionalString(f, 'type')
      if (type !== undefined && type !== 'command' && type !== 'notification') throw badRequest()
      const kinds: SubscriptionKind[] = []
      if ((type === undefined || type === 'command') && principal.actions.has(Action.GetDeviceCommand)) kinds.push('command')
      if ((type === undefined || type === 'notification') && principal.actions.has(Action.GetDeviceNotification)) kinds.push('notification')
      return { subscriptions: session.listSubscriptions(kinds) }
    }
  }
}

/**
 * R12 for entity payloads: the member of the frame each action reads its entity from, with the
 * body schema of the REST route doing the same thing. Normalising only rewrites a value into the
 * strict form of the same value (null = absent, `"5"` = 5, `"TRUE"` = true, `"GetDevice"` =
 * `["GetDevice"]`); every check (D1 for `token/create`, D7, the 400s) runs after it in the core.
 */
const ENTITY_PAYLOADS: Readonly<Record<string, { field: string, schema: object }>> = {
  'token/create': { field: 'payload', schema: TokenCreateBody },
  'device/save': { field: 'device', schema: DeviceBody },
  'network/insert': { field: 'network', schema: NamedEntityBody },
  'network/update': { field: 'network', schema: NamedEntityBody },
  'devicetype/insert': { field: 'deviceType', schema: NamedEntityBody },
  'devicetype/update': { field: 'deviceType', schema: NamedEntityBody },
  'user/insert': { field: 'user', schema: UserBody },
  'user/update': { field: 'user', schema: UserBody },
  'user/updateCurrent': { field: 'user', schema: UserBody },
  'command/insert': { field: 'command', schema: CommandInsertBody },
  'command/update': { field: 'command', schema: CommandUpdateBody },
  'notification/insert': { field: 'notification', schema: NotificationInsertBody }
}

function withLenientPayloads (catalogue: Record<string, ActionHandler>): Record<string, ActionHandler> {
  const actions = { ...catalogue }
  for (const [action, { field, schema }] of Object.entries(ENTITY_PAYLOADS)) {
    const handler = catalogue[action]
    if (handler === undefined) throw new Error(`no WebSocket action ${action}`)
    actions[action] = { ...handler, run: async (ctx, frame) => handler.run(ctx, lenientEntity(frame, field, schema)) }
  }
  return actions
}

/** The catalogue; `authenticate` lives in the session (it changes the session). */
export const ACTIONS: Record<string, ActionHandler> = withLenientPayloads(CATALOGUE)

/** The device filters of `device/list` and `device/count`, with REST's `search` extension (name or id, any case). */
function deviceFilter (frame: RequestFrame): {
  name?: string, namePattern?: string, networkId?: number, networkName?: string, search?: string
} {
  return {
    ...namedFilter(frame),
    networkId: optionalInteger(frame, 'networkId'),
    networkName: optionalString(frame, 'networkName'),
    search: optionalString(frame, 'search')
  }
}

function userFilter (frame: RequestFrame): { login?: string, loginPattern?: string, role?: number, status?: number } {
  return {
    login: optionalString(frame, 'login'),
    loginPattern: optionalString(frame, 'loginPattern'),
    role: optionalInteger(frame, 'role'),
    status: optionalInteger(frame, 'status')
  }
}

function userLink (
  action: Action,
  field: 'networkId' | 'deviceTypeId',
  message: string,
  call: (hub: DeviceHub, principal: Principal | undefined, userId: number, id: number) => Promise<void>
): ActionHandler {
  return {
    async run ({ hub, principal }, f) {
      requireAction(principal, action)
      await call(hub, principal, requireInteger(f, 'userId', USER_ID), requireInteger(f, field, message))
      return undefined
    }
  }
}

/** The message list filters: `start`, `end`, one name (`command`/`notification`, or the first of `names`), paging. */
function messageQuery (frame: RequestFrame, nameField: 'command' | 'notification'): {
  start?: string
  end?: string
  command?: string
  notification?: string
  sortField?: string
  sortOrder?: string
  take: number
  skip: number
} {
  const names = optionalStrings(frame, 'names')
  const name = optionalString(frame, nameField) ?? names?.[0]
  return { start: optionalTimestampText(frame, 'start'), end: optionalTimestampText(frame, 'end'), [nameField]: name, ...listInput(frame) }
}
