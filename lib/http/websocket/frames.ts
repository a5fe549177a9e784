/**
 * The WebSocket envelope (auth spec §5.3, §6.2): replies echo `action` and `requestId`, errors
 * carry exactly `action, requestId, code, status, error` in that order, pushes carry
 * `subscriptionId` and neither `requestId` nor `status`.
 */
import type { DeviceHubErrorCode } from '../../core/errors.js'
import { isDeviceHubError } from '../../core/errors.js'
import { STATUS_BY_CODE } from '../error-handler.js'
import { echoableId } from '../inbound-frame.js'

/** A parsed request frame: a JSON object; `action` is checked by the dispatcher. */
export type RequestFrame = Record<string, unknown>

export const MALFORMED_JSON = JSON.stringify({ code: 400, status: 'error', error: 'Malformed Json received.' })

/**
 * The answer to a frame that was refused before it was parsed (too deeply nested): like
 * {@link MALFORMED_JSON}, with no `action` or `requestId`, since none was read.
 *
 * @example
 * refusalFrame('JSON value is nested too deeply: at most 400 levels')
 */
export function refusalFrame (error: string): string {
  return JSON.stringify({ code: 400, status: 'error', error })
}

// Only a string action and a string or number requestId are echoed: anything else a client
// sent there (an object, an array, however nested) is answered as null, never serialised back.
const echoAction = (action: unknown): string | null => typeof action === 'string' ? action : null

/**
 * The success reply: `action`, `requestId` (null when absent or neither a string nor a number),
 * `status`, then the result fields.
 *
 * @example
 * successFrame('server/info', 7, { info }) // '{"action":"server/info","requestId":7,"status":"success","info":{...}}'
 */
export function successFrame (action: unknown, requestId: unknown, result: object | undefined): string {
  return JSON.stringify({ action: echoAction(action), requestId: echoableId(requestId), status: 'success', ...result })
}

export function errorFrame (action: unknown, requestId: unknown, code: number, error: string): string {
  return JSON.stringify({ action: echoAction(action), requestId: echoableId(requestId), code, status: 'error', error })
}

/** The status a core error code maps to; anything unknown is the client's fault, never a 500 (§6.7). */
export function statusOf (error: unknown): { code: number, message: string } | undefined {
  if (!isDeviceHubError(error)) return undefined
  const code = error.code as DeviceHubErrorCode
  const status = STATUS_BY_CODE[code]
  return { code: status >= 500 && code !== 'UNAVAILABLE' ? 400 : status, message: error.message }
}

// The JSON of a view is the same for every subscription it is pushed to (a memo cache of
// immutable values, not per-app state).
const viewJson = new WeakMap<object, string>()

/** The JSON text of a view, computed once however many sessions it is pushed to. */
export function jsonOf (view: object): string {
  let json = viewJson.get(view)
  if (json === undefined) {
    json = JSON.stringify(view)
    viewJson.set(view, json)
  }
  return json
}

/**
 * A subscription push: `{"action": ..., "<member>": <view>, "subscriptionId": <id>}`.
 *
 * @example
 * pushFrame('notification/insert', 'notification', view, 12)
 */
export function pushFrame (action: string, member: string, view: object, subscriptionId: number): string {
  return `{"action":"${action}","${member}":${jsonOf(view)},"subscriptionId":${subscriptionId}}`
}
