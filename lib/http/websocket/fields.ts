/**
 * Reading request fields of WebSocket frames into the core's typed inputs (auth spec §6.2 with
 * R12): `null` is absent, a JSON number is a device id, digit strings are ids, a single string
 * is a one-element list. Anything else answers 400 with the action's message. Entity payloads
 * (`payload`, `device`, `user`, ...) go through {@link lenientEntity} with the REST body schema.
 */
import { badRequest } from '../../core/errors.js'
import { normaliseInput } from '../../core/lenient-input.js'
import { parseTimestamp } from '../../core/time.js'
import type { RequestFrame } from './frames.js'

export const DEVICE_ID_MESSAGE = 'Device id is wrong or empty'

/** An optional string; numbers are written out (R12), anything else is 400. */
export function optionalString (frame: RequestFrame, field: string): string | undefined {
  const value = frame[field]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  throw badRequest()
}

/** `deviceId`: a string, or a number coerced (the tests send 999999); missing or empty is 400. */
export function requireDeviceId (frame: RequestFrame): string {
  const value = frame.deviceId
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value !== 'string' || value.trim() === '') throw badRequest(DEVICE_ID_MESSAGE)
  return value
}

/** An optional `deviceId` (subscriptions): absent or null is undefined, the empty string is 400. */
export function optionalDeviceId (frame: RequestFrame): string | undefined {
  if (frame.deviceId === undefined || frame.deviceId === null) return undefined
  return requireDeviceId(frame)
}

function integerOf (value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value
  if (typeof value === 'string' && /^-?\d{1,16}$/.test(value.trim())) {
    const n = Number(value.trim())
    if (Number.isSafeInteger(n)) return n
  }
  return undefined
}

/** An optional integer; `invalid` is the message for a value that is not one. */
export function optionalInteger (frame: RequestFrame, field: string, invalid?: string): number | undefined {
  const value = frame[field]
  if (value === undefined || value === null) return undefined
  const n = integerOf(value)
  if (n === undefined) throw badRequest(invalid)
  return n
}

/** A required integer id: missing, null or not an integer answers 400 `message`. */
export function requireInteger (frame: RequestFrame, field: string, message: string, invalid = message): number {
  const value = frame[field]
  if (value === undefined || value === null || value === '') throw badRequest(message)
  const n = integerOf(value)
  if (n === undefined) throw badRequest(invalid)
  return n
}

/** An optional list of integers (a single one is a one-element list). */
export function optionalIntegers (frame: RequestFrame, field: string): number[] | undefined {
  const value = frame[field]
  if (value === undefined || value === null) return undefined
  const items = Array.isArray(value) ? value : [value]
  return items.map((item) => {
    const n = integerOf(item)
    if (n === undefined) throw badRequest()
    return n
  })
}

/** An optional list of strings (a single string is a one-element list, R12). */
export function optionalStrings (frame: RequestFrame, field: string): string[] | undefined {
  const value = frame[field]
  if (value === undefined || value === null) return undefined
  const items = Array.isArray(value) ? value : [value]
  return items.map((item) => {
    if (typeof item !== 'string') throw badRequest()
    return item
  })
}

/** An optional boolean; strings `true`/`false` in any case (R12). */
export function optionalBoolean (frame: RequestFrame, field: string): boolean | undefined {
  const value = frame[field]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'boolean') return value
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true'
  throw badRequest()
}

/** An optional JSON object (a request's entity): anything else but null is 400 `missing`. */
export function optionalObject (frame: RequestFrame, field: string, missing?: string): Record<string, unknown> | undefined {
  const value = frame[field]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(missing)
  return value as Record<string, unknown>
}

/** An optional timestamp in any accepted form, as epoch ms. */
export function optionalTimestamp (frame: RequestFrame, field: string): number | undefined {
  const value = frame[field]
  if (value === undefined || value === null || value === '') return undefined
  const ms = parseTimestamp(value)
  if (ms === null || ms === undefined) throw badRequest()
  return ms
}

/** A timestamp field handed on as text to a core call that parses it. */
export function optionalTimestampText (frame: RequestFrame, field: string): string | undefined {
  const ms = optionalTimestamp(frame, field)
  return ms === undefined ? undefined : String(ms)
}

/**
 * The frame with its entity payload `field` read by the R12 rules of `schema`, the body schema
 * of the matching REST route, exactly as the REST adapter reads a body (lib/http/validation.ts).
 * Never rejects and never changes `frame`: a payload that is not an object is left for the
 * action to refuse with its own message, and values of the wrong kind stay as they are.
 *
 * @example
 * lenientEntity({ action: 'device/save', device: { networkId: '5', isBlocked: 'TRUE', name: null } }, 'device', DeviceBody)
 * // { action: 'device/save', device: { networkId: 5, isBlocked: true } }
 */
export function lenientEntity (frame: RequestFrame, field: string, schema: object): RequestFrame {
  const value = frame[field]
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return frame
  return { ...frame, [field]: normaliseInput(schema, value) }
}
