/**
 * Device notifications (spec §6.9-§6.13): query, get, insert and long polls.
 */
import { Action } from '../auth/actions.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import type { ServiceContext } from '../context.js'
import { loadDeviceInScope } from '../devices/device-access.js'
import { badRequest, forbidden, notFound } from '../errors.js'
import type { JsonObject } from '../ports.js'
import type { Cancellation } from '../realtime/cancellation.js'
import type { HubEvent } from '../realtime/hub.js'
import type { LongPollSpec } from '../realtime/long-poll.js'
import { longPoll } from '../realtime/long-poll.js'
import type { HighWater } from '../commands/command-ports.js'
import type { MessageSelector } from '../realtime/message-filter.js'
import { SYSTEM_NOTIFICATIONS, inMessageScope, nameSelected } from '../realtime/message-filter.js'
import { parseMessageQuery, parseNames, parsePathId, parseQueryTimestamp, parseWaitTimeout } from '../realtime/poll-params.js'
import type { PollTargets } from '../realtime/poll-scope.js'
import { resolvePollTargets } from '../realtime/poll-scope.js'
import { createSharedReader } from '../realtime/shared-read.js'
import { formatTimestamp, parseTimestamp } from '../time.js'
import { jsonObjectOrNull, requireBody } from '../validation.js'
import type { NotificationRecord } from './notification-ports.js'
import { recordNotification } from './record-notification.js'

export interface NotificationView {
  id: number
  notification: string
  deviceId: string
  networkId: number | null
  deviceTypeId: number | null
  timestamp: string
  parameters: JsonObject | null
}

export interface NotificationInsertView {
  id: number
  timestamp: string
}

export interface NotificationQueryInput {
  deviceId: string
  start?: string
  end?: string
  notification?: string
  sortField?: string
  sortOrder?: string
  take?: number
  skip?: number
}

export interface NotificationInsertBody {
  notification?: string
  timestamp?: unknown
  parameters?: unknown
}

export interface NotificationPollOptions {
  names?: string
  timestamp?: string
  waitTimeout?: number
  signal?: Cancellation
}

export interface NotificationService {
  query(principal: Principal | undefined, input: NotificationQueryInput): Promise<NotificationView[]>
  get(principal: Principal | undefined, input: { deviceId: string, id: string }): Promise<NotificationView>
  insert(principal: Principal | undefined, input: { deviceId: string, body: NotificationInsertBody | undefined }): Promise<NotificationInsertView>
  poll(principal: Principal | undefined, input: NotificationPollOptions & { deviceId: string }): Promise<NotificationView[]>
  pollMany(principal: Principal | undefined, input: NotificationPollOptions & PollTargets): Promise<NotificationView[]>
}

/** Notification polls have no `limit`: the backlog is capped at 100 (§6.13). */
const BACKLOG_CAP = 100
const SORT_FIELDS = { timestamp: 'timestamp', notification: 'notification' } as const

export function notificationView (n: NotificationRecord): NotificationView {
  return {
    id: n.id,
    notification: n.notification,
    deviceId: n.deviceId,
    networkId: n.networkId,
    deviceTypeId: n.deviceTypeId,
    timestamp: formatTimestamp(n.timestamp),
    parameters: n.parameters
  }
}

function toViews (items: NotificationRecord[]): NotificationView[] {
  return items.map(notificationView)
}

/**
 * One notification poll's rules for the waiter, as one object with prototype methods
 * (thousands may be parked: no closure per rule).
 */
class NotificationPoll implements LongPollSpec<NotificationRecord> {
  readonly hub: ServiceContext['hub']
  readonly waiters: ServiceContext['waiters']
  /** The cursor: strictly after it. Fixed by the first backlog read, so a `resync` reads again from the same point. */
  private cursor: number | undefined

  constructor (
    private readonly ctx: ServiceContext,
    readonly load: (event: HubEvent) => Promise<NotificationRecord | undefined>,
    private readonly selector: MessageSelector,
    private readonly given: number | undefined,
    readonly waitSeconds: number,
    readonly signal: Cancellation | undefined
  ) {
    this.hub = ctx.hub
    this.waiters = ctx.waiters
  }

  routes (event: HubEvent): boolean {
    return event.kind === 'notification' && inMessageScope(this.selector, event) && nameSelected(this.selector.names, event.name)
  }

  highWater (): Promise<HighWater> {
    return this.ctx.store.notifications.highWater()
  }

  backlog (mark: HighWater): Promise<NotificationRecord[]> {
    this.cursor ??= this.given ?? Math.max(this.ctx.clock.now(), mark.clock)
    return this.ctx.store.notifications.backlog({ ...this.selector, after: this.cursor, limit: BACKLOG_CAP })
  }

  accepts (n: NotificationRecord, mark: HighWater): boolean {
    return inMessageScope(this.selector, n) && nameSelected(this.selector.names, n.notification) && (n.id > mark.id || n.timestamp > this.cursor!)
  }
}

function notificationNotFound (): Error {
  return notFound('Requested notification not found')
}

export function createNotificationService (ctx: ServiceContext): NotificationService {
  const { store } = ctx
  const shared = createSharedReader<NotificationRecord | undefined>()
  const load = (event: HubEvent): Promise<NotificationRecord | undefined> =>
    shared.read(event, () => store.notifications.findById(event.id))

  function runPoll (selector: MessageSelector, options: NotificationPollOptions): Promise<NotificationView[]> {
    const given = parseQueryTimestamp(options.timestamp)
    const waitSeconds = parseWaitTimeout(options.waitTimeout)
    // No await: a parked poll should not keep a suspended frame alive.
    return longPoll<NotificationRecord>(new NotificationPoll(ctx, load, selector, given, waitSeconds, options.signal)).then(toViews)
  }

  return {
    async query (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceNotification, input.deviceId)
      const rows = await store.notifications.query({
        scope: principal!.scope,
        deviceIds: [input.deviceId],
        notification: input.notification === '' ? undefined : input.notification,
        ...parseMessageQuery(input, SORT_FIELDS, ctx.limits.maxTake)
      })
      return rows.map(notificationView)
    },

    async get (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceNotification, input.deviceId)
      const id = parsePathId(input.id, notificationNotFound)
      const row = await store.notifications.findById(id)
      if (row === undefined || row.deviceId !== input.deviceId) throw notificationNotFound()
      return notificationView(row)
    },

    async insert (principal, input) {
      // Java's order: body, name, special name, device (§6.11).
      requireAction(principal, Action.CreateDeviceNotification)
      const body = requireBody(input.body)
      const parameters = jsonObjectOrNull(body.parameters) ?? null
      const timestamp = parseTimestamp(body.timestamp)
      if (timestamp === null) throw badRequest()
      if (typeof body.notification !== 'string' || body.notification === '') throw badRequest()
      if (SYSTEM_NOTIFICATIONS.includes(body.notification)) throw forbidden('It\'s forbidden to insert these special notifications: $device-update, $device-add.')
      const device = await loadDeviceInScope(store, principal, Action.CreateDeviceNotification, input.deviceId)
      const row = await recordNotification(ctx, {
        notification: body.notification,
        deviceId: device.id,
        networkId: device.networkId,
        deviceTypeId: device.deviceTypeId,
        parameters,
        timestamp
      })
      return { id: row.id, timestamp: formatTimestamp(row.timestamp) }
    },

    async poll (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceNotification, input.deviceId)
      return runPoll({ scope: principal!.scope, deviceIds: [input.deviceId], names: parseNames(input.names) }, input)
    },

    async pollMany (principal, input) {
      const names = parseNames(input.names)
      parseQueryTimestamp(input.timestamp)
      parseWaitTimeout(input.waitTimeout)
      const targets = await resolvePollTargets(store, principal, Action.GetDeviceNotification, input)
      if (targets === undefined) return []
      return runPoll({ ...targets, names }, input)
    }
  }
}
