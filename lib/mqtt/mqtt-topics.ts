/**
 * The topic structure of DeviceHive's MQTT broker (devicehive-mqtt): requests on `dh/request`,
 * replies on `dh/response/<action>@<clientId>`, pushes on
 * `dh/<notification|command|command_update>/<networkId>/<deviceTypeId>/<deviceId>/<name>`, where a
 * subscription may use `+` for one level and `#` for the rest. Parsing here is total: any string
 * gives a value, never an exception.
 */
import type { SubscriptionInput, SubscriptionKind } from '../http/websocket/action-session.js'

export const REQUEST_TOPIC = 'dh/request'

/** The three push topics and what each subscribes to. */
export type EventTopic = 'notification' | 'command' | 'command_update'

export type ParsedTopic =
  | { kind: 'request' }
  /** A reply topic of `clientId`'s own (`dh/response/<action>@<clientId>`). */
  | { kind: 'response', action: string }
  | { kind: 'event', event: EventTopic, filter: EventFilter, owner: string | undefined }
  /** A `dh/` topic of no known form, or a malformed event topic (`reason` says why). */
  | { kind: 'invalid', reason: string }
  /** Not a DeviceHive topic. */
  | { kind: 'other' }

/** The levels of an event topic; undefined = a wildcard (or absent past `#`). */
export interface EventFilter {
  networkId?: number
  deviceTypeId?: number
  deviceId?: string
  name?: string
}

const EVENTS: ReadonlySet<string> = new Set(['notification', 'command', 'command_update'])
const OWNER_SEPARATOR = '@'

/**
 * `<topic>@<clientId>` → `['<topic>', clientId]`: only the client's own id is an owner suffix
 * (an id or a device id may hold an `@` itself).
 */
function splitOwner (topic: string, clientId: string | undefined): [string, string | undefined] {
  const suffix = `${OWNER_SEPARATOR}${clientId ?? ''}`
  if (clientId === undefined || !topic.endsWith(suffix)) return [topic, undefined]
  return [topic.slice(0, -suffix.length), clientId]
}

function idLevel (level: string | undefined): number | undefined | false {
  if (level === undefined || level === '+' || level === '#') return undefined
  if (!/^[1-9]\d{0,15}$/.test(level)) return false
  const id = Number(level)
  return Number.isSafeInteger(id) ? id : false
}

function textLevel (level: string | undefined): string | undefined {
  return level === undefined || level === '+' || level === '#' || level === '' ? undefined : level
}

function parseEvent (event: EventTopic, levels: string[], owner: string | undefined): ParsedTopic {
  if (levels.length > 4) return { kind: 'invalid', reason: `dh/${event} has at most 4 levels after it` }
  const hash = levels.indexOf('#')
  if (hash >= 0 && hash !== levels.length - 1) return { kind: 'invalid', reason: '# is only allowed as the last level' }
  const networkId = idLevel(levels[0])
  const deviceTypeId = idLevel(levels[1])
  if (networkId === false) return { kind: 'invalid', reason: 'the network level is an id, + or #' }
  if (deviceTypeId === false) return { kind: 'invalid', reason: 'the device type level is an id, + or #' }
  return { kind: 'event', event, owner, filter: { networkId, deviceTypeId, deviceId: textLevel(levels[2]), name: textLevel(levels[3]) } }
}

/**
 * @example
 * parseTopic('dh/response/device/get@c1', 'c1') // { kind: 'response', action: 'device/get' }
 * parseTopic('dh/notification/1/+/d1/#', 'c1')  // { kind: 'event', event: 'notification', filter: { networkId: 1, deviceId: 'd1' }, ... }
 * parseTopic('sensors/t1', 'c1')                // { kind: 'other' }
 */
export function parseTopic (topic: string, clientId?: string): ParsedTopic {
  if (!topic.startsWith('dh/')) return { kind: 'other' }
  if (topic === REQUEST_TOPIC) return { kind: 'request' }
  const [body, owner] = splitOwner(topic, clientId)
  const levels = body.split('/')
  if (levels[1] === 'response') {
    const action = levels.slice(2).join('/')
    if (action === '' || action.includes('+') || action.includes('#')) return {
      kind: 'invalid', reason: 'a response topic names its action'
    }
    if (owner === undefined) return { kind: 'invalid', reason: 'a response topic ends with @<your client id>' }
    return { kind: 'response', action }
  }
  const event = levels[1]
  if (event !== undefined && EVENTS.has(event)) return parseEvent(event as EventTopic, levels.slice(2), owner)
  return { kind: 'invalid', reason: `unknown DeviceHive topic ${levels.slice(0, 2).join('/')}` }
}

/**
 * A telemetry publish: `dh/notification/<networkId>/<deviceTypeId>/<deviceId>/<name>`. The network
 * and device type levels are not read (the stored notification has the device's own); undefined
 * when `topic` is no notification publish at all.
 *
 * @example
 * parseTelemetryTopic('dh/notification/1/1/lamp/temp') // { deviceId: 'lamp', name: 'temp' }
 * parseTelemetryTopic('dh/notification/lamp')          // { error: '...' }
 */
export function parseTelemetryTopic (topic: string): { deviceId: string, name: string } | { error: string } | undefined {
  if (!topic.startsWith('dh/notification/')) return undefined
  const levels = topic.split('/')
  const deviceId = levels[4]
  const name = levels[5]
  if (levels.length !== 6 || deviceId === undefined || deviceId === '' || name === undefined || name === '') {
    return { error: 'A notification is published on dh/notification/<networkId>/<deviceTypeId>/<deviceId>/<name>' }
  }
  return { deviceId, name }
}

/** The core subscription an event topic becomes: which kind, and the subscribe action's inputs. */
export function subscriptionOf (event: EventTopic, filter: EventFilter): { kind: SubscriptionKind, input: SubscriptionInput } {
  const input: SubscriptionInput = {}
  // As DeviceHive's broker: a device level makes the network and device type levels moot.
  if (filter.deviceId !== undefined) input.deviceId = filter.deviceId
  else {
    if (filter.networkId !== undefined) input.networkIds = [filter.networkId]
    if (filter.deviceTypeId !== undefined) input.deviceTypeIds = [filter.deviceTypeId]
  }
  if (filter.name !== undefined) input.names = [filter.name]
  if (event === 'command_update') input.returnUpdatedCommands = true
  return { kind: event === 'notification' ? 'notification' : 'command', input }
}

/** `dh/response/<action>@<clientId>`. */
export function responseTopic (action: string, clientId: string): string {
  return `dh/response/${action}${OWNER_SEPARATOR}${clientId}`
}

/** A message's level value: MQTT forbids wildcards in a published topic, so those are escaped out. */
function level (value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value)
  return text.replace(/[+#/]/g, '_')
}

/**
 * The topic a push is published on, from the pushed view (as DeviceHive's broker does).
 *
 * @example
 * pushTopic('notification', { networkId: 1, deviceTypeId: 2, deviceId: 'd1', notification: 'temp' }) // 'dh/notification/1/2/d1/temp'
 */
export function pushTopic (event: EventTopic, view: Record<string, unknown>): string {
  const name = event === 'notification' ? view.notification : view.command
  return ['dh', event, level(view.networkId), level(view.deviceTypeId), level(view.deviceId), level(name)].join('/')
}
