/**
 * The one error type the core throws. `code` says what kind of failure it is; `message` is the
 * contract's exact text (clients compare it). Only the HTTP adapter maps codes to statuses.
 *
 * @example
 * throw new DeviceHubError('NOT_FOUND', `Network with id = ${id} not found`)
 */
export type DeviceHubErrorCode =
  | 'VALIDATION_FAILED' // 400
  | 'UNAUTHENTICATED' // 401
  | 'FORBIDDEN' // 403
  | 'NOT_FOUND' // 404
  | 'CONFLICT' // 409
  | 'PAYLOAD_TOO_LARGE' // 413
  | 'TOO_MANY_REQUESTS' // 429
  | 'UNAVAILABLE' // 503
  | 'INTERNAL' // 500

export class DeviceHubError extends Error {
  readonly code: DeviceHubErrorCode
  /** Seconds the client should wait before trying again (`TOO_MANY_REQUESTS`). */
  readonly retryAfterSeconds: number | undefined

  constructor (code: DeviceHubErrorCode, message: string, options?: { cause?: unknown, retryAfterSeconds?: number }) {
    super(message, options)
    this.name = 'DeviceHubError'
    this.code = code
    this.retryAfterSeconds = options?.retryAfterSeconds
  }
}

/** Exact texts of the contract that more than one place uses. */
export const Messages = {
  unauthorized: 'Unauthorized',
  accessDenied: 'Access is denied',
  invalidParameters: 'Invalid request parameters',
  objectIsNull: 'Error! Validation failed: Object is null',
  notJsonObject: "'parameters' must be JSON Object!",
  conflict: 'Posted data conflicts with internal state. Retry again if you are sure that data is correct. ' +
    'Consider not forcing server to do implicit operations, e.g. avoid device class or network updates or replacing ' +
    'equipment set during device registration.',
  internal: 'Internal server error'
} as const

export function unauthorized (message: string = Messages.unauthorized): DeviceHubError {
  return new DeviceHubError('UNAUTHENTICATED', message)
}

export function forbidden (message: string = Messages.accessDenied): DeviceHubError {
  return new DeviceHubError('FORBIDDEN', message)
}

export function notFound (message: string): DeviceHubError {
  return new DeviceHubError('NOT_FOUND', message)
}

export function badRequest (message: string = Messages.invalidParameters): DeviceHubError {
  return new DeviceHubError('VALIDATION_FAILED', message)
}

export function isDeviceHubError (error: unknown): error is DeviceHubError {
  return error instanceof DeviceHubError
}
