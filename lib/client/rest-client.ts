/**
 * A small DeviceHive REST client on `fetch`: what a device or a script does over HTTP, with
 * the long polls used by firmware. The test rig and `devicehub simulate` use it, so they
 * exercise the same public API as any other client; it works against any DeviceHive-compatible
 * server. No framework, no core import but types.
 */
import type { CommandView, CommandInsertView } from '../core/commands/command-views.js'
import type { JsonObject } from '../core/ports.js'

export type { CommandView, CommandInsertView }

/** A notification as the REST API returns it. */
export interface NotificationView {
  id: number
  notification: string
  deviceId: string
  networkId: number
  deviceTypeId: number
  timestamp: string
  parameters: JsonObject | null
}

/** One request and its answer, reported to `onExchange` (tokens are never included). */
export interface Exchange {
  method: string
  path: string
  status: number
  ms: number
}

export interface RestClientOptions {
  /** The REST base URL, e.g. `http://127.0.0.1:8080/api/rest`. */
  url: string
  accessToken?: string
  /** When given, a 401 refreshes the access token once and retries. */
  refreshToken?: string
  onExchange?: (exchange: Exchange) => void
  /** Extra headers on every request. */
  headers?: Record<string, string>
}

export interface PollOptions {
  /** Cursor: items after this server timestamp. */
  timestamp?: string
  /** Seconds the server may hold the request (0-60). */
  waitTimeout?: number
  names?: string[]
  limit?: number
  signal?: AbortSignal
}

/** A non-2xx answer: the status and the server's `message`. */
export class RestError extends Error {
  constructor (readonly method: string, readonly path: string, readonly status: number, readonly body: unknown) {
    const detail = typeof body === 'object' && body !== null && 'message' in body ? String(body.message) : String(body)
    super(`${method} ${path} answered ${status}: ${detail}`)
    this.name = 'RestError'
  }
}

export interface RestClient {
  readonly url: string
  /** Any request; `query` values are joined with commas when they are lists. */
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T>
  info(): Promise<{ serverTimestamp: string, apiVersion: string, webSocketServerUrl?: string }>
  putDevice(
    id: string, body: { name?: string, data?: JsonObject | null, networkId?: number, deviceTypeId?: number, isBlocked?: boolean }
  ): Promise<void>
  sendCommand(
    deviceId: string, body: { command: string, parameters?: JsonObject, lifetime?: number, status?: string }
  ): Promise<CommandInsertView>
  getCommand(deviceId: string, id: number): Promise<CommandView>
  updateCommand(deviceId: string, id: number, body: { status?: string, result?: JsonObject | null }): Promise<void>
  /** Long poll for new commands of one device (`[]` on timeout). */
  pollCommands(deviceId: string, options?: PollOptions): Promise<CommandView[]>
  /** Waits for a command to be updated; `null` when the wait ended first. */
  waitForUpdate(deviceId: string, id: number, options?: { waitTimeout?: number, signal?: AbortSignal }): Promise<CommandView | null>
  sendNotification(deviceId: string, body: { notification: string, parameters?: JsonObject }): Promise<{ id: number, timestamp: string }>
  /** Long poll for new notifications of one device (`[]` on timeout). */
  pollNotifications(deviceId: string, options?: PollOptions): Promise<NotificationView[]>
}

export interface RequestOptions {
  body?: unknown
  query?: Record<string, string | number | boolean | string[] | undefined>
  signal?: AbortSignal
}

/**
 * @example
 * const client = createRestClient({ url: 'http://127.0.0.1:8080/api/rest', accessToken })
 * await client.putDevice('thermostat-1', { name: 'Thermostat' })
 * const [command] = await client.pollCommands('thermostat-1', { waitTimeout: 30 })
 */
export function createRestClient (options: RestClientOptions): RestClient {
  const base = options.url.replace(/\/+$/, '')
  let accessToken = options.accessToken

  async function send (method: string, path: string, request: RequestOptions): Promise<Response> {
    const url = new URL(base + path)
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, Array.isArray(value) ? value.join(',') : String(value))
    }
    const headers: Record<string, string> = { ...options.headers }
    if (accessToken !== undefined) headers.authorization = `Bearer ${accessToken}`
    if (request.body !== undefined) headers['content-type'] = 'application/json'
    const started = performance.now()
    const response = await fetch(url, {
      method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: request.signal
    })
    options.onExchange?.({ method, path: url.pathname + url.search, status: response.status, ms: performance.now() - started })
    return response
  }

  async function refresh (): Promise<boolean> {
    if (options.refreshToken === undefined) return false
    const response = await send('POST', '/token/refresh', { body: { refreshToken: options.refreshToken } })
    if (!response.ok) return false
    accessToken = ((await response.json()) as { accessToken: string }).accessToken
    return true
  }

  async function request<T> (method: string, path: string, request: RequestOptions = {}): Promise<T> {
    let response = await send(method, path, request)
    if (response.status === 401 && await refresh()) response = await send(method, path, request)
    const text = await response.text()
    const body: unknown = text === '' ? undefined : JSON.parse(text)
    if (!response.ok) throw new RestError(method, path, response.status, body)
    return body as T
  }

  const device = (id: string): string => `/device/${encodeURIComponent(id)}`
  const pollQuery = (o: PollOptions = {}): RequestOptions => ({
    query: { timestamp: o.timestamp, waitTimeout: o.waitTimeout, names: o.names, limit: o.limit },
    signal: o.signal
  })

  return {
    url: base,
    request,
    info: () => request('GET', '/info'),
    putDevice: (id, body) => request('PUT', device(id), { body }),
    sendCommand: (deviceId, body) => request('POST', `${device(deviceId)}/command`, { body }),
    getCommand: (deviceId, id) => request('GET', `${device(deviceId)}/command/${id}`),
    updateCommand: (deviceId, id, body) => request('PUT', `${device(deviceId)}/command/${id}`, { body }),
    pollCommands: async (deviceId, o) =>
      (await request<CommandView[] | undefined>('GET', `${device(deviceId)}/command/poll`, pollQuery(o))) ?? [],
    waitForUpdate: async (deviceId, id, o = {}) => {
      const answer = await request<CommandView | undefined>('GET', `${device(deviceId)}/command/${id}/poll`, {
        query: { waitTimeout: o.waitTimeout },
        signal: o.signal
      })
      return answer ?? null
    },
    sendNotification: (deviceId, body) => request('POST', `${device(deviceId)}/notification`, { body }),
    pollNotifications: async (deviceId, o) =>
      (await request<NotificationView[] | undefined>('GET', `${device(deviceId)}/notification/poll`, pollQuery(o))) ?? []
  }
}
