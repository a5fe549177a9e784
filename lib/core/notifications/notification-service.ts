/**
 * Device notifications (spec §6.9-§6.13): query, get, insert and long polls.
 */
import { Action } from '../auth/actions.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import type { ServiceContext } from '../context.js'
import type { DeviceCheck } from '../devices/device-access.js'
import { loadDeviceInScope, loadDeviceOrNotFound } from '../devices/device-access.js'
import { badRequest, forbidden, notFound } from '../errors.js'
import type { Cancellation } from '../realtime/cancellation.js'
import { cursorAtClock } from '../realtime/log-cursor.js'
import { longPoll } from '../realtime/long-poll.js'
import type { MessageSelector } from '../realtime/message-filter.js'
import { SYSTEM_NOTIFICATIONS } from '../realtime/message-filter.js'
import { namesOf, parseLimit, parseMessageQuery, parsePathId, parseWaitTimeout } from '../realtime/poll-params.js'
import type { PollTargets } from '../realtime/poll-scope.js'
import { resolvePollTargets } from '../realtime/poll-scope.js'
import { createEventLoader } from '../realtime/shared-read.js'
import { sharedViews } from '../realtime/shared-view.js'
import type { MessageStream } from '../realtime/message-stream.js'
import { openMessageStream } from '../realtime/message-stream.js'
import { createStreamSpec } from '../realtime/message-stream-spec.js'
import type { SubscribeTargets } from '../realtime/subscribe-scope.js'
import { resolveSubscribeTargets } from '../realtime/subscribe-scope.js'
import { formatTimestamp, parseTimestamp } from '../time.js'
import { jsonObjectOrNull, requireBody } from '../validation.js'
import type { NotificationRecord } from './notification-ports.js'
import type { NotificationInsertBody, NotificationInsertView, NotificationView } from './notification-schemas.js'

export type { NotificationInsertView, NotificationView } from './notification-schemas.js'

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

export type { NotificationInsertBody } from './notification-schemas.js'

/** Typed poll options; the REST adapter parses the query's CSV and timestamp text into these. */
export interface NotificationPollOptions {
  /** Exact names; absent or empty = every name except the system notifications. */
  names?: readonly string[]
  /** Cursor (epoch ms): notifications strictly after it; absent = from now. */
  timestamp?: number
  waitTimeout?: number
  /** Backlog cap: default 100, `0` = no limit; at most `--max-take` (§7.3). */
  limit?: number
  signal?: Cancellation
}

/** Typed input of {@link NotificationService.subscribe}. */
export interface NotificationSubscribeInput extends SubscribeTargets {
  /** Backlog: notifications strictly after this epoch-ms cursor; absent = live only. */
  after?: number
  /** Most backlog items (default 100, the WebSocket cap; `Infinity` to resume everything). */
  backlogLimit?: number
}

export interface NotificationService {
  /**
   * A continuous stream of notifications (WebSocket subscriptions, SSE): the backlog after
   * `after`, then live ones, in order, none lost or repeated (R9). Scope is checked now and
   * every item is matched at event time.
   *
   * @example
   * const stream = await hub.notifications.subscribe(principal, { deviceId: 'd1', after: 0 })
   * stream.start(({ cursor, item }) => send(cursor, item))
   */
  subscribe(principal: Principal | undefined, input: NotificationSubscribeInput): Promise<MessageStream<NotificationView>>
  /**
   * `check` is how the device is looked at: `scope` (default, D7) or `found` (WebSocket
   * `notification/list` and `notification/get`: 404 for a missing device, to every caller). It is
   * an argument of its own, so no client input can choose it.
   */
  query(principal: Principal | undefined, input: NotificationQueryInput, check?: DeviceCheck): Promise<NotificationView[]>
  get(principal: Principal | undefined, input: { deviceId: string, id: string }, check?: DeviceCheck): Promise<NotificationView>
  insert(
    principal: Principal | undefined, input: { deviceId: string, body: NotificationInsertBody | undefined }
  ): Promise<NotificationInsertView>
  poll(principal: Principal | undefined, input: NotificationPollOptions & { deviceId: string }): Promise<NotificationView[]>
  pollMany(principal: Principal | undefined, input: NotificationPollOptions & PollTargets): Promise<NotificationView[]>
}

/** The backlog of a WebSocket subscription: 100 (auth spec §6.7); polls read `limit` like commands (§7.3). */
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

/** One view per record, shared by every stream the record is delivered to. */
const sharedView = sharedViews(notificationView)

function notificationNotFound (): Error {
  return notFound('Requested notification not found')
}

export function createNotificationService (ctx: ServiceContext): NotificationService {
  const { store } = ctx
  const load = createEventLoader<NotificationRecord>((id) => store.notifications.findById(id))

  /** A poll is the first batch of a stream: the backlog after the cursor (up to `limit`), else the first live one. */
  function runPoll (
    principal: Principal | undefined, selector: MessageSelector, options: NotificationPollOptions
  ): Promise<NotificationView[]> {
    const limit = parseLimit(options.limit, ctx.limits.maxTake)
    const waitSeconds = parseWaitTimeout(options.waitTimeout)
    if (options.signal?.aborted === true || ctx.waiters.closed) return Promise.resolve([])
    const after = options.timestamp === undefined ? undefined : cursorAtClock(options.timestamp)
    const spec = createStreamSpec(
      ctx, 'notification', { selector, principal, load, view: sharedView, after, backlogLimit: limit, pageSize: limit }
    )
    // No await: a parked poll should not keep a suspended frame alive.
    return openMessageStream(spec).then((stream) => longPoll(stream, { waitSeconds, signal: options.signal }))
  }

  /** The device of a history read, checked as the transport asks (D7 by default). */
  async function loadReadDevice (principal: Principal | undefined, deviceId: string, check: DeviceCheck = 'scope'): Promise<void> {
    const load = check === 'found' ? loadDeviceOrNotFound : loadDeviceInScope
    await load(store, principal, Action.GetDeviceNotification, deviceId)
  }

  return {
    async subscribe (principal, input) {
      const selector = await resolveSubscribeTargets(store, principal, Action.GetDeviceNotification, input)
      const after = input.after === undefined ? undefined : cursorAtClock(input.after)
      const backlogLimit = input.backlogLimit ?? BACKLOG_CAP
      return openMessageStream(createStreamSpec(ctx, 'notification', { selector, principal, load, view: sharedView, after, backlogLimit }))
    },

    async query (principal, input, check) {
      await loadReadDevice(principal, input.deviceId, check)
      const rows = await store.notifications.query({
        scope: principal!.scope,
        deviceIds: [input.deviceId],
        notification: input.notification === '' ? undefined : input.notification,
        ...parseMessageQuery(input, SORT_FIELDS, ctx.limits.maxTake)
      })
      return rows.map(notificationView)
    },

    async get (principal, input, check) {
      await loadReadDevice(principal, input.deviceId, check)
      const id = parsePathId(input.id, notificationNotFound)
      const row = await store.notifications.findForDevice(input.deviceId, id)
      if (row === undefined) throw notificationNotFound()
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
      if (SYSTEM_NOTIFICATIONS.includes(body.notification)) {
        throw forbidden('It\'s forbidden to insert these special notifications: $device-update, $device-add.')
      }
      const device = await loadDeviceInScope(store, principal, Action.CreateDeviceNotification, input.deviceId)
      // Presence first, so a `$device-online` it announces comes before this notification.
      await ctx.presence.seen(device.id)
      const row = await ctx.log.append({
        kind: 'notification',
        input: {
          notification: body.notification, deviceId: device.id, networkId: device.networkId, deviceTypeId: device.deviceTypeId, parameters,
          timestamp
        }
      })
      return { id: row.id, timestamp: formatTimestamp(row.timestamp) }
    },

    async poll (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceNotification, input.deviceId)
      return runPoll(principal, { scope: principal!.scope, deviceIds: [input.deviceId], names: namesOf(input.names) }, input)
    },

    async pollMany (principal, input) {
      const names = namesOf(input.names)
      // Validate every parameter before deciding anything (§7.3 step 1).
      parseLimit(input.limit, ctx.limits.maxTake)
      parseWaitTimeout(input.waitTimeout)
      const targets = await resolvePollTargets(store, principal, Action.GetDeviceNotification, input)
      if (targets === undefined) return []
      return runPoll(principal, { ...targets, names }, input)
    }
  }
}
