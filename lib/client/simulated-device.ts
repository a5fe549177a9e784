/**
 * A device in software: long-polls its commands by cursor, answers each through a handler and
 * reports notifications. Used by the test rig (`rig.simulateDevice`) and `devicehub simulate`.
 */
import type { JsonObject } from '../core/ports.js'
import type { CommandView, RestClient } from './rest-client.js'
import { connectWebSocket } from './websocket-client.js'
import type { WebSocketClient } from './websocket-client.js'

/** What a handler may answer: a result object, or a status with a result. */
export type CommandReply = JsonObject | null | undefined | { status: string, result?: JsonObject | null }

/**
 * How the device answers a command. A handler that throws marks the command `failed` with
 * `{ error: message }`; one that answers nothing marks it `completed`.
 */
export type CommandHandler = (command: CommandView) => CommandReply | Promise<CommandReply>

export type Behaviour = CommandHandler | Record<string, CommandHandler>

export interface SimulatedDeviceOptions {
  /** The device's own client (a token allowed to poll and update its commands). */
  client: RestClient
  deviceId: string
  behaviour: Behaviour
  /** Cursor to start from (default: the server's time when `start()` runs). */
  since?: string
  /** Long-poll wait in seconds (default 30). */
  waitTimeout?: number
  /** A failed poll or update (network, 5xx) is reported here and retried after `retryMs`. */
  onError?: (error: unknown) => void
  retryMs?: number
  /**
   * `rest` (default): long polls by cursor. `websocket`: one WebSocket at `webSocketUrl`,
   * authenticated with `token`, a `command/subscribe` from the cursor and `command/update` replies.
   */
  transport?: 'rest' | 'websocket'
  webSocketUrl?: string
  token?: string
}

export interface SimulatedDevice {
  readonly deviceId: string
  /** Commands answered so far: each counted once, when the server acknowledged its update. */
  readonly handled: number
  /**
   * Resolves once the server has acknowledged this device's update of `commandId` (at once if it
   * already has); rejects when `signal` aborts. A client waiting on the command hears of the
   * update when it commits, possibly before the device has the answer to its own request.
   */
  whenAnswered(commandId: number, signal?: AbortSignal): Promise<void>
  start(): Promise<void>
  /** Stops polling; an in-flight poll is aborted. Idempotent. */
  stop(): Promise<void>
}

function isStatusReply (reply: CommandReply): reply is { status: string, result?: JsonObject | null } {
  return typeof reply === 'object' && reply !== null && typeof reply.status === 'string' &&
    Object.keys(reply).every((k) => k === 'status' || k === 'result')
}

async function answer (behaviour: Behaviour, command: CommandView): Promise<{ status: string, result: JsonObject | null }> {
  const handler = typeof behaviour === 'function' ? behaviour : behaviour[command.command]
  if (handler === undefined) return { status: 'failed', result: { error: `no handler for command '${command.command}'` } }
  try {
    const reply = await handler(command)
    if (isStatusReply(reply)) return { status: reply.status, result: reply.result ?? null }
    return { status: 'completed', result: (reply ?? null) as JsonObject | null }
  } catch (error) {
    return { status: 'failed', result: { error: error instanceof Error ? error.message : String(error) } }
  }
}

/** Command ids remembered as answered (and, over WebSocket, as taken) per device. */
const REMEMBERED = 10_000

interface Acknowledgements {
  readonly count: number
  /** The server acknowledged the update of `id` (a repeated update of one command counts once). */
  add(id: number): void
  when(id: number, signal?: AbortSignal): Promise<void>
}

function createAcknowledgements (): Acknowledgements {
  const ids = new Set<number>()
  const waiting = new Map<number, Set<() => void>>()
  let count = 0
  return {
    get count () { return count },
    add (id) {
      if (ids.has(id)) return
      ids.add(id)
      if (ids.size > REMEMBERED) ids.delete(ids.values().next().value!)
      count++
      const waiters = waiting.get(id)
      waiting.delete(id)
      for (const resolve of waiters ?? []) resolve()
    },
    when (id, signal) {
      if (ids.has(id)) return Promise.resolve()
      if (signal?.aborted === true) return Promise.reject(signal.reason)
      return new Promise<void>((resolve, reject) => {
        const waiters = waiting.get(id) ?? new Set()
        waiting.set(id, waiters)
        const abort = (): void => {
          waiters.delete(done)
          if (waiters.size === 0 && waiting.get(id) === waiters) waiting.delete(id)
          reject(signal!.reason)
        }
        const done = (): void => {
          signal?.removeEventListener('abort', abort)
          resolve()
        }
        waiters.add(done)
        signal?.addEventListener('abort', abort, { once: true })
      })
    }
  }
}

/**
 * @example
 * const device = createSimulatedDevice({ client, deviceId: 'lamp-1', behaviour: { on: () => ({ lit: true }) } })
 * await device.start()
 * // ... later
 * await device.stop()
 */
export function createSimulatedDevice (options: SimulatedDeviceOptions): SimulatedDevice {
  const { client, deviceId, behaviour } = options
  const controller = new AbortController()
  const acknowledged = createAcknowledgements()
  let loop: Promise<void> | undefined

  let socket: WebSocketClient | undefined

  /**
   * One WebSocket session: subscribe from `cursor`, answer pushes one at a time in order.
   * Resolves once subscribed; `socket.closed` tells when it ends.
   */
  async function openSession (cursor: { value: string }, answered: Set<number>): Promise<WebSocketClient> {
    if (options.webSocketUrl === undefined || options.token === undefined) {
      throw new Error('transport websocket needs webSocketUrl and token')
    }
    const session = await connectWebSocket(options.webSocketUrl, options.token)
    let queue = Promise.resolve()
    await session.subscribe('command/subscribe', { deviceId, timestamp: cursor.value }, (push) => {
      const command = push.command as CommandView | undefined
      // The backlog starts at the cursor inclusive: a command answered before a reconnect comes again.
      if (push.action !== 'command/insert' || command === undefined || answered.has(command.id)) return
      answered.add(command.id)
      if (answered.size > REMEMBERED) answered.delete(answered.values().next().value!)
      queue = queue.then(async () => {
        const { status, result } = await answer(behaviour, command)
        await session.request('command/update', { deviceId, commandId: command.id, command: { status, result } })
        acknowledged.add(command.id)
        cursor.value = command.timestamp
      }).catch((error: unknown) => {
        // Unacknowledged (the socket closed first): the session resumed from the cursor gets the
        // command again and answers it again, as a REST device retries its poll.
        answered.delete(command.id)
        if (!controller.signal.aborted) options.onError?.(error)
      })
    })
    return session
  }

  /** Keeps a session open: after an unexpected close, reconnects and resumes from the cursor. */
  async function reconnecting (cursor: { value: string }, answered: Set<number>): Promise<void> {
    while (!controller.signal.aborted) {
      const code = await socket!.closed
      if (controller.signal.aborted) return
      options.onError?.(new Error(`the WebSocket of '${deviceId}' closed (${code}); reconnecting`))
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 250).unref())
        if (controller.signal.aborted) return
        try {
          socket = await openSession(cursor, answered)
          break
        } catch (error) {
          options.onError?.(error)
        }
      }
    }
  }

  async function run (cursor: string): Promise<void> {
    while (!controller.signal.aborted) {
      try {
        const commands = await client.pollCommands(
          deviceId, { timestamp: cursor, waitTimeout: options.waitTimeout ?? 30, signal: controller.signal }
        )
        for (const command of commands) {
          if (controller.signal.aborted) return
          await client.updateCommand(deviceId, command.id, await answer(behaviour, command))
          acknowledged.add(command.id)
          cursor = command.timestamp
        }
      } catch (error) {
        if (controller.signal.aborted) return
        options.onError?.(error)
        await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 250).unref())
      }
    }
  }

  return {
    deviceId,
    get handled () { return acknowledged.count },
    whenAnswered: (commandId, signal) => acknowledged.when(commandId, signal),
    async start () {
      if (loop !== undefined) return
      const since = options.since ?? (await client.info()).serverTimestamp
      if (options.transport === 'websocket') {
        const cursor = { value: since }
        const answered = new Set<number>()
        socket = await openSession(cursor, answered)
        loop = reconnecting(cursor, answered)
      } else {
        loop = run(since)
      }
    },
    async stop () {
      controller.abort()
      await socket?.close()
      await loop
    }
  }
}
