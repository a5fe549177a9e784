/**
 * What the PostgreSQL bus sends on its NOTIFY channel, and how a payload reads back
 * (postgres-doorbell.ts). The message events of a write ride its statement
 * (store/repositories/pg-message-writes.ts builds them), so their form is shared by two layers
 * that do not import each other: this file is where it is written down.
 */
import type { BusEvent, LocalEvent, MessageEvent, MessageKind } from '../core/realtime/bus.js'
import { commandRecordOf, notificationRecordOf } from '../core/realtime/message-records.js'
import type { CommandRecord, NotificationRecord } from '../core/realtime/message-records.js'
import type { JsonObject } from '../core/values.js'

const MESSAGE_KINDS: ReadonlySet<string> = new Set<MessageKind>(['command', 'command-update', 'notification'])

/** `deviceId` prefix of a password-change `revoke` on the wire; the id of the token it spares follows (or nothing). */
const PASSWORD_CHANGE = 'password:'

/**
 * Compact wire form: ids and routing keys, then the record when it fits. Control events keep the
 * six-element form of earlier versions (instances of two versions may share a database during an
 * upgrade): `plugin` as [kind, plugin id, '', null, null, topic], `revoke` as [kind, user id,
 * '' or `password:<kept token id>`, null, null, '' or a plugin's topic], `stale-reads` as [kind, 0,
 * '', null, null, ''] (an instance of a version before it logs that one as malformed and ignores
 * it: its reads then wait out its cache's age, as before). Device ids (48) and
 * names (128) are bounded by their columns, so a payload stays below PostgreSQL's 8000-byte NOTIFY
 * limit. Writes that ride the statement (pg-message-writes.ts) send ten elements: these six, the
 * record or null, and the draw chain (`prev`, `stamp`, `nextXid`); a statement of several rows
 * sends them packed (see `decodeDoorbellEvents`).
 */
export function encodeDoorbellEvent (event: Exclude<BusEvent, LocalEvent>): string {
  if (event.kind === 'plugin') return JSON.stringify([event.kind, event.pluginId, '', null, null, event.topic])
  if (event.kind === 'stale-reads') return STALE_READS
  if (event.kind === 'revoke') {
    const tokens = event.what === 'tokens' ? `${PASSWORD_CHANGE}${event.keptTokenId}` : ''
    return JSON.stringify([event.kind, event.userId, tokens, null, null, event.what === 'plugin' ? event.topic : ''])
  }
  const fields = [event.kind, event.id, event.deviceId, event.networkId, event.deviceTypeId, event.name]
  if (event.record === undefined) return JSON.stringify(fields)
  const withRecord = JSON.stringify([...fields, event.record])
  // NOTIFY payloads end at 8,000 bytes: a large record stays behind (listeners read the row).
  return Buffer.byteLength(withRecord) <= MAX_PAYLOAD ? withRecord : JSON.stringify(fields)
}

/** `stale-reads` on the wire: one payload, so PostgreSQL folds a transaction's copies into one NOTIFY. */
const STALE_READS = JSON.stringify(['stale-reads', 0, '', null, null, ''])

/** Largest payload sent with its record (PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more). */
const MAX_PAYLOAD = 7900

/**
 * The event a payload carries, or undefined for anything malformed. A packed payload reads as
 * its header alone: this is how instances of earlier versions (whose decoder this is) see it.
 *
 * @example
 * decodeDoorbellEvent('["notification",7,"dev-1",1,2,"temperature"]')?.kind // 'notification'
 */
export function decodeDoorbellEvent (payload: string): BusEvent | undefined {
  return decodeValue(parsePayload(payload))
}

/** Whether a payload is a message event's (every form starts with its kind), told without parsing it. */
export function isMessagePayload (payload: string | undefined): boolean {
  return payload !== undefined && (payload.startsWith('["notification"') || payload.startsWith('["command'))
}

/** Whether a payload is a `revoke` event's, told without parsing it (as `isMessagePayload`). */
export function isRevokePayload (payload: string | undefined): boolean {
  return payload !== undefined && payload.startsWith('["revoke"')
}

/** Whether a payload is a `stale-reads` event's, told without parsing it (as `isMessagePayload`). */
export function isStaleReadsPayload (payload: string | undefined): boolean {
  return payload === STALE_READS
}

/** PostgreSQL refuses NOTIFY payloads of this many bytes or more: a longer one is not ours. */
const NOTIFY_LIMIT = 8000

/**
 * The JSON of a payload, or undefined when it is malformed or longer than any NOTIFY (checked
 * before parsing; within the limit, nesting is bounded too, and the decoders read two levels).
 */
function parsePayload (payload: string): unknown {
  if (payload.length >= NOTIFY_LIMIT) return undefined
  try {
    return JSON.parse(payload)
  } catch {
    return undefined
  }
}

/**
 * Every event a payload carries: one, or every row of a packed payload; none for anything
 * malformed.
 *
 * Packed form (one NOTIFY for a statement of several rows instead of one per row,
 * pg-message-writes.ts): `[kind, id, '', null, null, '', rows, stamp - 1, stamp, nextXid]`, ten
 * elements, where `rows` holds every row's event in the ten-element form, `id` is the largest of
 * their ids and `stamp` the last row's. The header's own chain names as `prev` the stamp just
 * before its `stamp`, which belongs to a row of the same statement that is never sent alone. An
 * instance of an earlier version drops the array (not a record) and waits for that link, which
 * never comes: its ordered bus finds the gap settled and resynchronises (reads the log up to a
 * fresh mark), so it misses nothing during a rolling upgrade; it only answers later
 * (docs/deployment.md). A multi-row insert sends the input pack instead (`decodeInputPack`).
 *
 * @example
 * for (const event of decodeDoorbellEvents(message.payload ?? '')) deliver(event)
 */
export function decodeDoorbellEvents (payload: string): BusEvent[] {
  const value = parsePayload(payload)
  const header = decodeValue(value)
  if (header === undefined) return []
  const pack = (value as unknown[])[6]
  if (!('order' in header) || header.order === undefined) return [header]
  if (isInputPack(pack)) return decodeInputPack(header as OrderedEvent, pack)
  if (!Array.isArray(pack)) return [header]
  const events: MessageEvent[] = []
  for (const row of pack) {
    const event = Array.isArray(row) && row.length === 10 && !Array.isArray(row[6]) ? decodeValue(row) : undefined
    if (event === undefined || !('order' in event) || event.order === undefined || event.kind !== header.kind) return []
    events.push(event)
  }
  // The header names the pack's last stamp: a pack that does not end there is not one of ours.
  return events.length > 1 && events.at(-1)!.order!.stamp === header.order.stamp ? events : []
}

/** A message event with its draw chain. */
type OrderedEvent = MessageEvent & { order: NonNullable<MessageEvent['order']> }

/** Whether the seventh element is an input pack's body (which `decodeInputPack` then checks), not a record. */
const isInputPack = (value: unknown): value is { first: unknown, rows: unknown } =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && 'rows' in value && 'first' in value

/** The first row's id, stamp and `prev`: three safe integers. */
const isFirst = (first: unknown): first is [id: number, stamp: number, prev: number] =>
  Array.isArray(first) && first.length === 3 && first.every((n) => Number.isSafeInteger(n))

/**
 * The events of an input pack, the form of a multi-row insert whose events the writer builds
 * from its input (store/repositories/pg-insert-events.ts): `[kind, lastId, '', null, null, '',
 * {"first": [id, stamp, prev], "rows": [...]}, lastStamp - 1, lastStamp, nextXid]`, each row
 * `[deviceId, networkId, deviceTypeId, name, fields]` (without `fields` when the record stayed
 * behind); row i has the id and stamp of the first plus i. `fields` is a notification's parameters,
 * or a command's `[userId, parameters, lifetime, status, result]`; the record is built from them
 * as the writer builds its own. None when any row is malformed or the rows do not end at the
 * header's id and stamp. An instance of stop 48's version reads the header alone, as with the
 * array packs of earlier versions (`decodeDoorbellEvents`).
 */
function decodeInputPack (header: OrderedEvent, { first, rows }: { first: unknown, rows: unknown }): MessageEvent[] {
  const { kind, order } = header
  if (!isFirst(first) || !Array.isArray(rows) || rows.length === 0 || (kind !== 'notification' && kind !== 'command')) return []
  const [firstId, firstStamp, prev] = first
  const events: MessageEvent[] = []
  for (let i = 0; i < rows.length; i++) {
    const row: unknown = rows[i]
    if (!Array.isArray(row) || (row.length !== 4 && row.length !== 5)) return []
    const [deviceId, networkId, deviceTypeId, name, fields] = row as unknown[]
    if (typeof deviceId !== 'string' || !nullableId(networkId) || !nullableId(deviceTypeId) || typeof name !== 'string') return []
    const id = firstId + i
    const stamp = firstStamp + i
    const event: MessageEvent = { kind, id, deviceId, networkId, deviceTypeId, name }
    if (row.length === 5) {
      const record = kind === 'notification'
        ? notificationOf(name, deviceId, networkId, deviceTypeId, fields, id, stamp)
        : commandOf(name, deviceId, networkId, deviceTypeId, fields, id, stamp)
      if (record === undefined) return []
      event.record = record
    }
    event.order = { prev: i === 0 ? prev : stamp - 1, stamp, nextXid: order.nextXid }
    events.push(event)
  }
  const last = events.at(-1)!
  return last.id === header.id && last.order!.stamp === order.stamp ? events : []
}

const isObjectOrNull = (v: unknown): v is JsonObject | null => v === null || (typeof v === 'object' && !Array.isArray(v))

function notificationOf (
  notification: string, deviceId: string, networkId: number | null, deviceTypeId: number | null, parameters: unknown,
  id: number, stamp: number
): NotificationRecord | undefined {
  if (!isObjectOrNull(parameters)) return undefined
  return notificationRecordOf({ notification, deviceId, networkId, deviceTypeId, parameters }, id, stamp)
}

function commandOf (
  command: string, deviceId: string, networkId: number | null, deviceTypeId: number | null, fields: unknown, id: number, stamp: number
): CommandRecord | undefined {
  if (!Array.isArray(fields) || fields.length !== 5 || networkId === null || deviceTypeId === null) return undefined
  const [userId, parameters, lifetime, status, result] = fields as unknown[]
  if (!nullableId(userId) || !isObjectOrNull(parameters) || !nullableId(lifetime) || !(status === null || typeof status === 'string') ||
    !isObjectOrNull(result)) return undefined
  return commandRecordOf({ command, deviceId, networkId, deviceTypeId, userId, parameters, lifetime, status, result }, id, stamp)
}

const nullableId = (v: unknown): v is number | null => v === null || Number.isSafeInteger(v)

function decodeValue (value: unknown): BusEvent | undefined {
  if (!Array.isArray(value) || (value.length !== 6 && value.length !== 7 && value.length !== 10)) return undefined
  const [kind, id, deviceId, networkId, deviceTypeId, name, record, prev, stamp, nextXid] = value as unknown[]
  if (typeof kind !== 'string' || !Number.isSafeInteger(id) || typeof deviceId !== 'string' ||
    !nullableId(networkId) || !nullableId(deviceTypeId) || typeof name !== 'string') return undefined
  if (kind === 'plugin' || kind === 'revoke') return value.length === 6 ? controlEvent(kind, id as number, deviceId, name) : undefined
  if (kind === 'stale-reads') return value.length === 6 ? { kind } : undefined
  if (!MESSAGE_KINDS.has(kind)) return undefined
  const event: MessageEvent = { kind: kind as MessageKind, id: id as number, deviceId, networkId, deviceTypeId, name }
  // The record is written by devicehub's own statements (pg-message-writes.ts) in the record's
  // shape; one that does not name the same message is ignored (the listener reads the row).
  if (isRecordOf(event, record)) event.record = record
  if (value.length === 10) {
    // The draw chain of a statement-borne write (pg-message-writes.ts): required to order it.
    if (!Number.isSafeInteger(prev) || !Number.isSafeInteger(stamp) || !Number.isSafeInteger(nextXid)) return undefined
    event.order = { prev: prev as number, stamp: stamp as number, nextXid: nextXid as number }
  }
  return event
}

function controlEvent (kind: 'plugin' | 'revoke', id: number, deviceId: string, name: string): BusEvent {
  if (kind === 'plugin') return { kind, pluginId: id, topic: name }
  if (name !== '') return { kind, userId: id, what: 'plugin', topic: name }
  if (deviceId.startsWith(PASSWORD_CHANGE)) return { kind, userId: id, what: 'tokens', keptTokenId: deviceId.slice(PASSWORD_CHANGE.length) }
  return { kind, userId: id, what: 'rights' }
}

function isRecordOf (event: MessageEvent, record: unknown): record is NonNullable<MessageEvent['record']> {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return false
  const r = record as Record<string, unknown>
  const named = event.kind === 'notification' ? r.notification : r.command
  return r.id === event.id && r.deviceId === event.deviceId && named === event.name &&
    Number.isSafeInteger(r.timestamp) && Number.isSafeInteger(r.stamp)
}
