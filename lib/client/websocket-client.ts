/**
 * A small DeviceHive WebSocket client (the `ws` package): request/reply by `requestId`, pushes
 * by `subscriptionId`. What a WebSocket device or dashboard does; the test rig's simulated
 * devices use it with `transport: 'websocket'`.
 */
import WebSocket from 'ws'

/** An `error` reply: its code and the server's message. */
export class WebSocketActionError extends Error {
  constructor (readonly action: string, readonly code: number, readonly error: string) {
    super(`${action} answered ${code}: ${error}`)
    this.name = 'WebSocketActionError'
  }
}

export type Push = Record<string, unknown> & { action: string, subscriptionId: number }

export interface WebSocketClient {
  /** Sends an action and resolves with its `success` reply (rejects with the `error` one). */
  request<T extends Record<string, unknown> = Record<string, unknown>>(action: string, fields?: Record<string, unknown>): Promise<T>
  /** Subscribes (`command/subscribe`, `notification/subscribe`); `onPush` gets each push. */
  subscribe(
    action: 'command/subscribe' | 'notification/subscribe', fields: Record<string, unknown>, onPush: (push: Push) => void
  ): Promise<number>
  /** Resolves when the connection closes, with the close code. */
  readonly closed: Promise<number>
  close(): Promise<void>
}

/**
 * Connects and authenticates with `token`.
 *
 * @example
 * const ws = await connectWebSocket('ws://127.0.0.1:8080/api/websocket', accessToken)
 * await ws.subscribe('command/subscribe', { deviceId: 'lamp-1' }, (push) => console.log(push.command))
 */
export async function connectWebSocket (url: string, token: string): Promise<WebSocketClient> {
  const socket = new WebSocket(url)
  const pending = new Map<number, { action: string, resolve: (reply: Record<string, unknown>) => void, reject: (error: Error) => void }>()
  const listeners = new Map<number, (push: Push) => void>()
  // Pushes that arrive in the same chunk as their subscribe reply, before the listener is set.
  const early = new Map<number, Push[]>()
  let nextId = 1
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`the WebSocket closed (${code}) before ${waiter.action} was answered`))
    pending.clear()
    resolve(code)
  }))
  socket.on('error', () => {})
  socket.on('message', (data) => {
    let frame: Record<string, unknown>
    try {
      frame = JSON.parse(data.toString()) as Record<string, unknown>
    } catch {
      return
    }
    if (typeof frame.subscriptionId === 'number' && frame.status === undefined) {
      const listener = listeners.get(frame.subscriptionId)
      if (listener !== undefined) listener(frame as Push)
      else early.set(frame.subscriptionId, [...early.get(frame.subscriptionId) ?? [], frame as Push])
      return
    }
    const waiter = typeof frame.requestId === 'number' ? pending.get(frame.requestId) : undefined
    if (waiter === undefined) return
    pending.delete(frame.requestId as number)
    if (frame.status === 'success') waiter.resolve(frame)
    else waiter.reject(new WebSocketActionError(waiter.action, Number(frame.code), String(frame.error)))
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })

  const request = <T extends Record<string, unknown>>(action: string, fields: Record<string, unknown> = {}): Promise<T> =>
    new Promise((resolve, reject) => {
      if (socket.readyState !== WebSocket.OPEN) return reject(new Error(`the WebSocket is closed; ${action} not sent`))
      const requestId = nextId++
      pending.set(requestId, { action, resolve: resolve as (reply: Record<string, unknown>) => void, reject })
      socket.send(JSON.stringify({ ...fields, action, requestId }))
    })

  await request('authenticate', { token })
  return {
    request,
    async subscribe (action, fields, onPush) {
      const reply = await request<{ subscriptionId: number }>(action, fields)
      listeners.set(reply.subscriptionId, onPush)
      for (const push of early.get(reply.subscriptionId) ?? []) onPush(push)
      early.clear()
      return reply.subscriptionId
    },
    closed,
    async close () {
      if (socket.readyState === WebSocket.CLOSED) return
      socket.close(1000)
      await closed
    }
  }
}
