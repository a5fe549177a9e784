/**
 * The plugin proxy's wire shapes (DeviceHive's devicehive-proxy-message envelope): requests
 * `{id, t, a, p}`, replies `{id, t, a, s, p}`, deliveries `{t:"notif", s:0, st, p:{m, c}}` whose
 * `m` is the JSON text of DeviceHive's backend response `{b, cId, l, err, fld}`. Key order is
 * DeviceHive's; members without a value are omitted, never null.
 */
import { Type } from 'typebox'
import type { Static } from 'typebox'
import type { CommandRecord } from '../../core/commands/command-ports.js'
import { commandView } from '../../core/commands/command-views.js'
import type { NotificationRecord } from '../../core/notifications/notification-ports.js'
import { notificationView } from '../../core/notifications/notification-service.js'
import type { PluginDeliveryItem } from '../../core/plugins/plugin-delivery.js'
import { echoableId } from '../inbound-frame.js'

/** A request as clients send it; every member is optional and checked by the session. */
export const ProxyRequest = Type.Object({
  id: Type.Optional(Type.Union([Type.String(), Type.Number()], { description: 'Correlation id, echoed' })),
  t: Type.Optional(Type.String({ description: 'plugin, topic or health' })),
  a: Type.Optional(Type.String({ description: 'authenticate, subscribe, unsubscribe, create, list' })),
  p: Type.Optional(Type.Unknown())
})
export type ProxyRequest = Static<typeof ProxyRequest>

export const ProxyReply = Type.Object({
  id: Type.Optional(Type.Unknown()),
  t: Type.Unknown(),
  a: Type.Optional(Type.Unknown()),
  s: Type.Union([Type.Literal(0), Type.Literal(1)]),
  p: Type.Optional(Type.Unknown())
})
export type ProxyReply = Static<typeof ProxyReply>

export const FailurePayload = Type.Object({ m: Type.String() })

export const AuthenticatePayload = Type.Object({ e: Type.Integer(), t: Type.Integer(), tpc: Type.String() })
export type AuthenticatePayload = Static<typeof AuthenticatePayload>

export const TopicPayload = Type.Object({ sg: Type.Optional(Type.Unknown()), t: Type.Array(Type.String()) })
export type TopicPayload = Static<typeof TopicPayload>

export const HealthPayload = Type.Object({ prx: Type.String(), mb: Type.String(), mbfp: Type.String(), comm: Type.String() })
export const HEALTH: Static<typeof HealthPayload> = Object.freeze({ prx: 'Available', mb: 'Available', mbfp: '0.00', comm: 'Available' })

/** A delivery frame: `m` is the event text, `c` the cursor to resume after it (P6). */
export const ProxyDelivery = Type.Object({
  t: Type.Literal('notif'),
  s: Type.Literal(0),
  st: Type.String(),
  p: Type.Object({ m: Type.String(), c: Type.String() })
})
export type ProxyDelivery = Static<typeof ProxyDelivery>

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

/** `b.notification` of the event text: every key, nulls included, in this order. */
export const EventNotification = Type.Object({
  id: Type.Integer(),
  notification: Type.String(),
  deviceId: Type.String(),
  networkId: Nullable(Type.Integer()),
  deviceTypeId: Nullable(Type.Integer()),
  timestamp: Type.String(),
  parameters: Nullable(Type.Record(Type.String(), Type.Unknown()))
})

/** `b.command` of the event text; unlike WebSocket pushes it carries `isUpdated`. */
export const EventCommand = Type.Object({
  id: Type.Integer(),
  command: Type.String(),
  timestamp: Type.String(),
  lastUpdated: Type.String(),
  userId: Nullable(Type.Integer()),
  deviceId: Type.String(),
  networkId: Type.Integer(),
  deviceTypeId: Type.Integer(),
  parameters: Nullable(Type.Record(Type.String(), Type.Unknown())),
  lifetime: Nullable(Type.Integer()),
  status: Nullable(Type.String()),
  result: Nullable(Type.Record(Type.String(), Type.Unknown())),
  isUpdated: Type.Boolean()
})

/** The decoded `p.m`: DeviceHive's serialised backend response. */
export const EventText = Type.Object({
  b: Type.Union([
    Type.Object({ notification: EventNotification, a: Type.Literal(10) }),
    Type.Object({ command: EventCommand, a: Type.Union([Type.Literal(21), Type.Literal(23)]) })
  ]),
  cId: Type.String(),
  l: Type.Literal(false),
  err: Type.Literal(0),
  fld: Type.Literal(false)
})
export type EventText = Static<typeof EventText>

/** DeviceHive's event codes (`b.a`). */
export const EventCode = { notification: 10, command: 21, 'command-update': 23 } as const

/**
 * A reply in DeviceHive's key order; `id` and `a` only when the request had them as a string or
 * number, `t` the request's string or number `t`, else `ack`.
 *
 * @example
 * encodeReply({ id: '7', t: 'topic', a: 'subscribe' }, 1, { m: 'Plugin not authorized' })
 * // '{"id":"7","t":"topic","a":"subscribe","s":1,"p":{"m":"Plugin not authorized"}}'
 */
export function encodeReply (request: { id?: unknown, t?: unknown, a?: unknown }, s: 0 | 1, p?: unknown): string {
  // Only strings and numbers are echoed: a nested `id`, `t` or `a` is never serialised back.
  const id = echoableId(request.id)
  const t = echoableId(request.t)
  const a = echoableId(request.a)
  const reply: ProxyReply = { t: t === null || t === '' || t === 0 ? 'ack' : t, s }
  const ordered: Record<string, unknown> = {}
  if (id !== null) ordered.id = id
  ordered.t = reply.t
  if (a !== null) ordered.a = a
  ordered.s = s
  if (p !== undefined) ordered.p = p
  return JSON.stringify(ordered)
}

// The same views as REST and WebSocket (same fields, same order); a command adds `isUpdated`.
function notificationJson (n: NotificationRecord): Static<typeof EventNotification> {
  return notificationView(n)
}

function commandJson (c: CommandRecord, isUpdated: boolean): Static<typeof EventCommand> {
  return { ...commandView(c), isUpdated }
}

/**
 * The event text of §4.2 for one delivered item.
 *
 * @example
 * JSON.parse(encodeEventText(item)).b.a // 10
 */
export function encodeEventText (item: PluginDeliveryItem): string {
  const b = item.notification !== undefined
    ? { notification: notificationJson(item.notification), a: EventCode.notification }
    : { command: commandJson(item.command!, item.kind === 'command-update'), a: EventCode[item.kind as 'command' | 'command-update'] }
  const text: EventText = { b, cId: item.cId, l: false, err: 0, fld: false }
  return JSON.stringify(text)
}

/**
 * A delivery frame for the plugin's topic.
 *
 * @example
 * encodeDelivery('plugin_topic_…', item) // '{"t":"notif","s":0,"st":"plugin_topic_…","p":{"m":"{…}","c":"12.3.1763820000123"}}'
 */
export function encodeDelivery (topic: string, item: PluginDeliveryItem): string {
  const frame: ProxyDelivery = { t: 'notif', s: 0, st: topic, p: { m: encodeEventText(item), c: item.cursor } }
  return JSON.stringify(frame)
}
