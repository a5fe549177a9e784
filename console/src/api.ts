/**
 * The console's REST client: Bearer tokens kept in sessionStorage (gone when the tab closes),
 * one transparent refresh on 401, and every failure as an {@link ApiError} carrying the message
 * the API returned.
 */

export class ApiError extends Error {
  constructor (readonly status: number, message: string) {
    super(message)
  }
}

export interface Tokens {
  accessToken: string
  refreshToken: string
}

export interface User {
  id: number
  login: string
  role: number
  status: number
  lastLogin: string | null
  allDeviceTypesAvailable: boolean
  /** Present when read by id or as the caller (`/user/current`). */
  networks?: Named[]
}

export interface Named {
  id: number
  name: string
  description: string | null
}

export interface Device {
  id: string
  name: string
  data: Record<string, unknown> | null
  networkId: number
  deviceTypeId: number
  isBlocked: boolean
  lastSeen: string | null
  online: boolean
}

export interface Notification {
  id: number
  notification: string
  deviceId: string
  timestamp: string
  parameters: Record<string, unknown> | null
}

export interface Command {
  id: number
  command: string
  timestamp: string
  lastUpdated: string
  userId: number | null
  parameters: Record<string, unknown> | null
  status: string | null
  result: Record<string, unknown> | null
}

const ACCESS = 'devicehub.accessToken'
const REFRESH = 'devicehub.refreshToken'

export interface Api {
  readonly base: string
  signedIn(): boolean
  signIn(login: string, password: string): Promise<void>
  signOut(): void
  request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T>
  /** A GET whose body the caller reads as a stream (Server-Sent Events); non-2xx answers throw. */
  open(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response>
  /** Called when the session ends on its own (refresh token expired or revoked). */
  onSignedOut(listener: (reason: string) => void): void
}

async function messageOf (res: Response): Promise<string> {
  const text = await res.text()
  try {
    const body = JSON.parse(text) as { message?: unknown }
    if (typeof body.message === 'string' && body.message !== '') return body.message
  } catch {
    // not JSON: fall through
  }
  return text.trim() !== '' ? text.trim().slice(0, 300) : `HTTP ${res.status} ${res.statusText}`
}

/**
 * @example
 * const api = createApi('/api/rest')
 * await api.signIn('dhadmin', 'secret')
 * const devices = await api.request<Device[]>('GET', '/device')
 */
export function createApi (base: string, storage: Storage = sessionStorage): Api {
  let refreshing: Promise<boolean> | undefined
  const listeners: Array<(reason: string) => void> = []

  async function raw (method: string, path: string, body: unknown, token: string | null, signal?: AbortSignal, extra: Record<string, string> = {}): Promise<Response> {
    const headers: Record<string, string> = { ...extra }
    if (token !== null) headers.authorization = `Bearer ${token}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    try {
      return await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal })
    } catch (error) {
      if (signal?.aborted === true) throw error
      throw new ApiError(0, 'The server cannot be reached. Check your connection and try again.')
    }
  }

  function clear (): void {
    storage.removeItem(ACCESS)
    storage.removeItem(REFRESH)
  }

  async function refresh (): Promise<boolean> {
    const refreshToken = storage.getItem(REFRESH)
    if (refreshToken === null) return false
    const res = await raw('POST', '/token/refresh', { refreshToken }, null)
    if (!res.ok) return false
    const { accessToken } = await res.json() as { accessToken: string }
    storage.setItem(ACCESS, accessToken)
    return true
  }

  /** One request; on 401 one refresh (shared by every request that failed at the same time) and one retry. */
  async function send (method: string, path: string, body: unknown, signal: AbortSignal | undefined, headers: Record<string, string>): Promise<Response> {
    let res = await raw(method, path, body, storage.getItem(ACCESS), signal, headers)
    if (res.status === 401 && storage.getItem(REFRESH) !== null) {
      refreshing ??= refresh().finally(() => { refreshing = undefined })
      if (await refreshing) {
        res = await raw(method, path, body, storage.getItem(ACCESS), signal, headers)
      } else {
        const message = await messageOf(res)
        clear()
        for (const listener of listeners) listener('Your session has ended. Please sign in again.')
        throw new ApiError(401, message)
      }
    }
    if (!res.ok) throw new ApiError(res.status, await messageOf(res))
    return res
  }

  const api: Api = {
    base,
    signedIn: () => storage.getItem(ACCESS) !== null,

    async signIn (login, password) {
      const res = await raw('POST', '/token', { login, password }, null)
      if (!res.ok) throw new ApiError(res.status, await messageOf(res))
      const tokens = await res.json() as Tokens
      storage.setItem(ACCESS, tokens.accessToken)
      storage.setItem(REFRESH, tokens.refreshToken)
    },

    signOut: clear,

    async request<T> (method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
      const res = await send(method, path, body, signal, {})
      if (res.status === 204) return undefined as T
      const text = await res.text()
      return (text === '' ? undefined : JSON.parse(text)) as T
    },

    open (path, headers, signal) {
      return send('GET', path, undefined, signal, headers)
    },

    onSignedOut (listener) {
      listeners.push(listener)
    }
  }
  return api
}

export function errorText (error: unknown): string {
  if (error instanceof ApiError) return error.message
  if (error instanceof Error) return error.message
  return String(error)
}

/** Server timestamps are UTC without a zone (`2026-11-22T14:03:00.123`). */
export function parseServerTime (value: string): Date {
  return new Date(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`)
}

export function relativeTime (value: string | null, now = Date.now()): string {
  if (value === null) return 'never'
  const seconds = Math.round((now - parseServerTime(value).getTime()) / 1000)
  if (seconds < 5) return 'just now'
  if (seconds < 60) return `${seconds} s ago`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`
  return `${Math.floor(seconds / 86_400)} d ago`
}
