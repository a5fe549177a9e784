/**
 * One WebSocket connection (auth spec §6.1-§6.7): frames are handled one at a time in arrival
 * order (a client may send `authenticate` and its next action without waiting), each reply echoes
 * `action` and `requestId`, subscriptions push through one bounded outbound buffer. Closing the
 * connection closes every stream, so no doorbell listener outlives it.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { RawData, WebSocket } from 'ws'
import type { Principal } from '../../core/auth/principal.js'
import type { DeviceHub } from '../../core/devicehub.js'
import { DeviceHubError, unauthorized } from '../../core/errors.js'
import type { MessageStream } from '../../core/realtime/message-stream.js'
import { StreamRevokedError } from '../../core/realtime/message-stream.js'
import type { FrameQueue } from '../frame-queue.js'
import { DEFAULT_MAX_PENDING_FRAMES, createFrameQueue } from '../frame-queue.js'
import { FRAME_TOO_BIG, readFrame } from '../inbound-frame.js'
import type { ActionHandler } from './actions.js'
import { ACTIONS } from './actions.js'
import type { ActionSession, SubscriptionInfo, SubscriptionInput, SubscriptionKind } from './action-session.js'
import { subscriptionInfo } from './action-session.js'
import type { RequestFrame } from './frames.js'
import { MALFORMED_JSON, errorFrame, pushFrame, refusalFrame, statusOf, successFrame } from './frames.js'
import type { RegisteredSession, WebSocketRegistry } from './registry.js'


export interface SessionLimits {
  /** Outbound bytes queued before the session is cut off (default 512 KiB, §6.7). */
  maxBufferedBytes: number
  /** How long queued outbound data may stay unsent before the session is cut off (default 10 s). */
  sendTimeoutMs: number
  /** Largest inbound frame in bytes: a larger one closes the connection with 1009 (default 1 MiB). */
  maxFrameBytes: number
  /** Frames received and not yet answered: one more closes the connection with 1008 (default 1,000). */
  maxPendingFrames: number
  /** Subscriptions one connection may hold (default 1,000). */
  maxSubscriptions: number
  /** A session not authenticated by then is closed with 1008 (default 60 s). */
  authTimeoutMs: number
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxBufferedBytes: 512 * 1024,
  sendTimeoutMs: 10_000,
  maxFrameBytes: 1024 * 1024,
  maxPendingFrames: DEFAULT_MAX_PENDING_FRAMES,
  maxSubscriptions: 1000,
  authTimeoutMs: 60_000
}

/** Close of a session that did not authenticate in time (as the plugin proxy, P12). */
export const AUTH_TIMEOUT_CLOSE = { code: 1008, reason: 'Authentication timeout' } as const
/** Close of a session that queued more frames than it may. */
export const TOO_MANY_PENDING_CLOSE = { code: 1008, reason: 'Too many pending messages' } as const

/** The answer (429) to a subscribe past the per-connection cap. */
export function tooManySubscriptions (max: number): DeviceHubError {
  return new DeviceHubError('TOO_MANY_REQUESTS', `Too many subscriptions: at most ${max} per connection`)
}

export interface SessionOptions {
  hub: DeviceHub
  registry: WebSocketRegistry
  logger: FastifyBaseLogger
  /** `server/info`'s `restServerUrl`. */
  restServerUrl: string
  /** The client's address (Fastify's `request.ip` of the upgrade): the `token` action is throttled by it. */
  clientAddress?: string
  limits: SessionLimits
  /** From a bearer header on the upgrade request (§6.1). */
  principal?: Principal
  token?: string
  /** Extra actions (modules on the same endpoint); they override none of the catalogue. */
  actions?: Readonly<Record<string, ActionHandler>>
}

interface Subscription {
  info: SubscriptionInfo
  stream: MessageStream<object>
}

const AUTHENTICATE: ActionHandler = { public: true, run: async () => undefined }

/** Close code when the user's rights changed under an open subscription (policy violation). */
export const REVOKED_CLOSE_CODE = 1008

export class WebSocketSession implements RegisteredSession, ActionSession {
  principal: Principal | undefined
  private token: string | undefined
  readonly restServerUrl: string
  readonly clientAddress: string | undefined
  /** WebSocket's `command/update` reads `status` and `result` only (§6.4). */
  readonly updatesCommandParameters = false
  private readonly subscriptions = new Map<number, Subscription>()
  private readonly queue: FrameQueue
  private authTimer: NodeJS.Timeout | undefined
  private closed = false
  /** When outbound data was first seen queued and not yet drained (0 = nothing queued). */
  private stalledSince = 0
  private alive = true

  constructor (private readonly socket: WebSocket, private readonly options: SessionOptions) {
    this.principal = options.principal
    this.token = options.token
    this.restServerUrl = options.restServerUrl
    this.clientAddress = options.clientAddress
    options.registry.add(this)
    const { limits } = options
    this.queue = createFrameQueue({
      maxPending: limits.maxPendingFrames,
      onOverflow: () => this.close(TOO_MANY_PENDING_CLOSE.code, TOO_MANY_PENDING_CLOSE.reason),
      onError: (error) => this.failed(error),
      pause: () => socket.pause(),
      resume: () => socket.resume()
    })
    // Many clients open the socket and authenticate later; one that never does is not kept.
    if (this.principal === undefined) {
      this.authTimer = setTimeout(() => {
        if (this.principal === undefined) this.close(AUTH_TIMEOUT_CLOSE.code, AUTH_TIMEOUT_CLOSE.reason)
      }, limits.authTimeoutMs)
      this.authTimer.unref()
    }
    socket.on('message', this.onMessage)
    socket.on('pong', () => { this.alive = true })
    socket.on('close', () => this.release())
    socket.on('error', (error) => {
      options.logger.debug({ err: error }, 'websocket error')
      this.release()
    })
  }

  get subscriptionCount (): number {
    return this.subscriptions.size
  }

  /**
   * Every frame is bounded (size, then depth on the text) before it is parsed; only then is it
   * queued. A listener that threw here would escape into the process, so this one never throws.
   */
  private readonly onMessage = (data: RawData, isBinary: boolean): void => {
    try {
      if (this.closed) return
      if (isBinary) {
        this.send(MALFORMED_JSON)
        return
      }
      const read = readFrame(data, { maxBytes: this.options.limits.maxFrameBytes })
      if (read.kind === 'too-big') {
        this.close(FRAME_TOO_BIG.code, FRAME_TOO_BIG.reason)
        return
      }
      if (read.kind === 'too-deep') {
        this.send(refusalFrame(read.message))
        return
      }
      const frame = read.kind === 'json' ? read.value : undefined
      if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
        this.send(MALFORMED_JSON)
        return
      }
      this.queue.push(read.bytes, async () => this.handle(frame as RequestFrame))
    } catch (error) {
      this.failed(error)
    }
  }

  /** What no handler classified: logged, and the one connection is cut off (never the process). */
  private failed (error: unknown): void {
    this.options.logger.error({ err: error }, 'websocket frame failed')
    this.cutOff('frame handling failed')
  }

  private async handle (frame: RequestFrame): Promise<void> {
    const { action, requestId } = frame
    if (typeof action !== 'string') {
      this.send(errorFrame(null, requestId, 400, '\'action\' field could not be parsed to known endpoint'))
      return
    }
    const handler = action === 'authenticate'
      ? AUTHENTICATE
      : Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : this.options.actions?.[action]
    if (handler === undefined) {
      this.send(errorFrame(action, requestId, 400, `Illegal argument: ${action}`))
      return
    }
    try {
      const result = action === 'authenticate'
        ? await this.authenticate(frame.token)
        : await handler.run(
          { hub: this.options.hub, session: this, principal: handler.public === true ? this.principal : await this.recheck() }, frame
        )
      if (!this.closed) this.send(successFrame(
        action, requestId, result instanceof SubscribeReply ? { subscriptionId: result.subscriptionId } : result
      ))
      if (result instanceof SubscribeReply) result.start()
    } catch (error) {
      const known = statusOf(error)
      if (known === undefined) this.options.logger.error({ err: error, action }, 'websocket action failed')
      else this.options.logger.debug({ code: known.code, message: known.message, action }, 'websocket action refused')
      // Never a 500 (§6.7): what the core does not classify is answered as a bad request.
      if (!this.closed) this.send(errorFrame(action, requestId, known?.code ?? 400, known?.message ?? 'Invalid request parameters'))
    }
  }

  /** `authenticate` (§6.3): replaces the session principal; subscriptions keep their scope. */
  private async authenticate (token: unknown): Promise<undefined> {
    if (typeof token !== 'string' || token === '') throw unauthorized()
    const result = await this.options.hub.tokens.verifyAccessToken(token)
    if ('failure' in result) throw unauthorized(result.failure === 'expired' ? 'Token expired' : 'Invalid credentials')
    await this.options.hub.tokens.noteSessionLogin(result.principal)
    this.principal = result.principal
    this.token = token
    return undefined
  }

  /** D10: the token's expiry and its user are checked again on every action. */
  private async recheck (): Promise<Principal | undefined> {
    if (this.token === undefined) return this.principal
    const result = await this.options.hub.tokens.verifyAccessToken(this.token)
    if ('failure' in result) throw unauthorized(result.failure === 'expired' ? 'Token expired' : 'Unauthorized')
    this.principal = result.principal
    return result.principal
  }

  /**
   * Registers a stream opened by a subscribe action; the reply is sent first, then
   * `start()` delivers the backlog and live items (§6.5 order).
   */
  addSubscription (kind: SubscriptionKind, stream: MessageStream<object>, frame: RequestFrame, input: SubscriptionInput): SubscribeReply {
    if (this.closed) {
      stream.close()
      throw unauthorized()
    }
    if (this.subscriptions.size >= this.options.limits.maxSubscriptions) {
      stream.close()
      throw tooManySubscriptions(this.options.limits.maxSubscriptions)
    }
    const subscriptionId = this.options.registry.nextSubscriptionId()
    const info = subscriptionInfo(subscriptionId, kind, input, frame)
    this.subscriptions.set(subscriptionId, { info, stream })
    const action = kind === 'notification'
      ? 'notification/insert'
      : input.returnUpdatedCommands === true ? 'command/update' : 'command/insert'
    const member = kind
    return new SubscribeReply(subscriptionId, () => {
      stream.start(({ item }) => this.send(pushFrame(action, member, item, subscriptionId)), (error) => {
        this.subscriptions.delete(subscriptionId)
        if (error instanceof StreamRevokedError) {
          // The user's rights changed: the session's principal is stale. Closing makes the client
          // reconnect, authenticate and subscribe again (from its last timestamp) under the new rights.
          this.close(REVOKED_CLOSE_CODE, error.message)
          return
        }
        this.options.logger.error({ err: error }, 'subscription failed')
      })
    })
  }

  unsubscribe (kind: SubscriptionKind, id: number): boolean {
    const subscription = this.subscriptions.get(id)
    if (subscription === undefined || subscription.info.type !== kind) return false
    subscription.stream.close()
    this.subscriptions.delete(id)
    return true
  }

  unsubscribeAll (kind: SubscriptionKind): void {
    for (const [id, subscription] of this.subscriptions) {
      if (subscription.info.type === kind) this.unsubscribe(kind, id)
    }
  }

  listSubscriptions (kinds: readonly SubscriptionKind[]): SubscriptionInfo[] {
    return [...this.subscriptions.values()].filter((s) => kinds.includes(s.info.type)).map((s) => s.info)
  }

  /** Sends a frame unless the client stopped reading: past the buffer cap the session is cut off. */
  send (frame: string): void {
    if (this.closed) return
    const { socket } = this
    if (socket.readyState !== socket.OPEN) return
    if (socket.bufferedAmount + frame.length > this.options.limits.maxBufferedBytes) {
      this.cutOff('outbound buffer full')
      return
    }
    socket.send(frame)
    if (socket.bufferedAmount === 0) this.stalledSince = 0
    else if (this.stalledSince === 0) this.stalledSince = Date.now()
  }

  /** The registry's timer: a ping frame, and the checks of a connection that stopped moving. */
  ping (): void {
    if (this.closed) return
    const { socket } = this
    if (this.stalledSince !== 0) {
      if (socket.bufferedAmount === 0) this.stalledSince = 0
      else if (Date.now() - this.stalledSince > this.options.limits.sendTimeoutMs) {
        this.cutOff('send timeout')
        return
      }
    }
    // Pongs carry nothing (§6.1), but a peer that answered no ping for a whole interval is gone.
    if (!this.alive) {
      this.cutOff('no pong')
      return
    }
    this.alive = false
    if (socket.readyState === socket.OPEN) socket.ping()
  }

  /** A slow consumer is dropped at once: a close frame would wait behind the unsent data. */
  private cutOff (reason: string): void {
    this.options.logger.warn({ reason }, 'websocket session cut off')
    this.release()
    this.socket.terminate()
  }

  close (code: number, reason: string): void {
    this.release()
    this.socket.close(code, reason)
  }

  /** Everything the session holds goes: streams (doorbell listeners) and the registry entry. */
  private release (): void {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.authTimer)
    for (const subscription of this.subscriptions.values()) subscription.stream.close()
    this.subscriptions.clear()
    this.options.registry.remove(this)
  }
}

/** The result of a subscribe action: the reply's fields, and what to do once it is sent. */
export class SubscribeReply {
  constructor (readonly subscriptionId: number, private readonly begin: () => void) {}

  start (): void {
    this.begin()
  }

}
