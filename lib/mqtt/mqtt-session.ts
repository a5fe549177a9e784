/**
 * One MQTT client's DeviceHive session: the WebSocket API's actions (the same catalogue, the same
 * service calls and the same stream engine) behind DeviceHive's MQTT topics. Requests on
 * `dh/request` and telemetry publishes run one at a time in arrival order; each topic
 * subscription is a core subscription of this client alone, pushed to this client alone (never
 * through the broker's shared topic fan-out, so overlapping topics of two users never leak).
 */
import type { Client } from 'aedes'
import type { FastifyBaseLogger } from 'fastify'
import type { Principal } from '../core/auth/principal.js'
import { revokesPrincipal } from '../core/auth/revocations.js'
import type { DeviceHub } from '../core/devicehub.js'
import { unauthorized } from '../core/errors.js'
import type { MessageStream } from '../core/realtime/message-stream.js'
import { StreamRevokedError } from '../core/realtime/message-stream.js'
import type { FrameQueue } from '../http/frame-queue.js'
import { createFrameQueue } from '../http/frame-queue.js'
import { readFrame } from '../http/inbound-frame.js'
import type { ActionSession, SubscriptionInfo, SubscriptionInput, SubscriptionKind } from '../http/websocket/action-session.js'
import type { ActionHandler } from '../http/websocket/actions.js'
import { ACTIONS } from '../http/websocket/actions.js'
import type { RequestFrame } from '../http/websocket/frames.js'
import { errorFrame, pushFrame, statusOf, successFrame } from '../http/websocket/frames.js'
import { tooManySubscriptions } from '../http/websocket/session.js'
import type { SentMessage } from './durable-sessions.js'
import type { MqttLimits } from './mqtt-limits.js'
import type { EventFilter, EventTopic } from './mqtt-topics.js'
import { pausableClient } from './client-pause.js'
import { ownerOf } from './mqtt-auth.js'
import { pushTopic, responseTopic, subscriptionOf } from './mqtt-topics.js'
import { createRecentKeys } from './recent-keys.js'
import { REASON } from './mqtt5-reason-codes.js'

/** Where an unreadable request (bad JSON, too deep, no action) is answered. */
export const ERROR_ACTION = 'error'

export interface MqttSessionOptions {
  hub: DeviceHub
  client: Client
  logger: FastifyBaseLogger
  limits: MqttLimits
  /** `server/info`'s `restServerUrl`. */
  restServerUrl: string
  clientAddress: string | undefined
  principal?: Principal
  token?: string
  /** A new subscription id (shared with the WebSocket sessions' numbering rule). */
  nextSubscriptionId(): number
  /** Every QoS 1 publish to the client, in order, with the command cursor it carries (durable-sessions.ts). */
  sent?: (message: SentMessage) => void
  /** Called once when the session is released (the server's count of live sessions). */
  onRelease?: (session: MqttSession) => void
  /** Before the server closes the connection: an MQTT 5 client's DISCONNECT (mqtt5-front-end.ts). */
  disconnect?: (reasonCode: number, reason: string) => void
}

interface Subscription {
  info: SubscriptionInfo
  stream: MessageStream<object>
  event: EventTopic
  /** The MQTT topic filter it was made for; undefined when made by a subscribe request on dh/request. */
  topic: string | undefined
  qos: 0 | 1
}

/** How many pushed messages a session remembers to deliver overlapping topics' copies once. */
const DELIVERED_KEYS = 4096

/**
 * How long a telemetry publisher's verified principal serves its next publishes: the read
 * cache's bound on staleness (lib/store/read-cache.ts), for changes made by another process that
 * send no `revoke` (the CLI on the same SQLite file). A `revoke` or `resync` drops it at once.
 */
const VERIFIED_FOR_MS = 1000

interface Verified {
  principal: Principal | undefined
  at: number
}

const AUTHENTICATE: ActionHandler = { public: true, run: async () => undefined }

/** The reply of a subscribe action: started once the reply (or the SUBACK) is out. */
class SubscribeReply {
  constructor (readonly subscriptionId: number, readonly start: () => void) {}
}

export class MqttSession implements ActionSession {
  principal: Principal | undefined
  private token: string | undefined
  readonly restServerUrl: string
  readonly clientAddress: string | undefined
  /** devicehive-mqtt's `command/update` replaces `parameters` too (its integration suite asserts it). */
  readonly updatesCommandParameters = true
  private readonly subscriptions = new Map<number, Subscription>()
  /** Topic filter → its subscription id. */
  private readonly topics = new Map<string, number>()
  /** Response topics the client subscribed to (`dh/response/<action>@<clientId>`). */
  private readonly responses = new Set<string>()
  /** Keys of the messages topic subscriptions pushed lately (see deliveredBefore). */
  private readonly delivered = createRecentKeys(DELIVERED_KEYS)
  /** Subscriptions made by SUBSCRIBE, started once the SUBACK is written. */
  private readonly unstarted: Array<() => void> = []
  private readonly queue: FrameQueue
  private authTimer: NodeJS.Timeout | undefined
  private closed = false
  /** The principal telemetry publishes last verified (see telemetryPrincipal). */
  private verified: Verified | undefined
  /** Stops hearing `revoke` / `resync` (registered with the first verified telemetry publish). */
  private stopHearing: (() => void) | undefined
  /** `revoke` / `resync` events heard that concern this session. */
  private revocations = 0

  constructor (private readonly options: MqttSessionOptions) {
    this.principal = options.principal
    this.token = options.token
    this.restServerUrl = options.restServerUrl
    this.clientAddress = options.clientAddress
    const gate = pausableClient(options.client)
    this.queue = createFrameQueue({
      maxPending: options.limits.maxPendingRequests,
      onOverflow: () => this.cutOff('too many pending requests', REASON.messageRateTooHigh),
      onError: (error) => {
        options.logger.error({ err: error }, 'mqtt request failed')
        this.cutOff('request handling failed', REASON.implementationSpecificError)
      },
      // Backpressure: reading from the connection pauses while much is queued.
      pause: () => gate.pause(),
      resume: () => gate.resume()
    })
    if (this.principal === undefined) {
      this.authTimer = setTimeout(() => {
        if (this.principal === undefined) this.cutOff('authentication timeout', REASON.notAuthorized)
      }, options.limits.authTimeoutMs)
      this.authTimer.unref()
    }
  }

  get clientId (): string {
    return this.options.client.id
  }

  /** Who holds the session: `user:<id>`, `plugin:<id>`, `system` or `anonymous` (client id takeovers compare it). */
  get owner (): string {
    return ownerOf(this.principal)
  }

  /** Topic subscriptions held (event topics and response topics), against `maxSubscriptions`. */
  get topicCount (): number {
    return this.topics.size + this.responses.size
  }

  get subscriptionCount (): number {
    return this.subscriptions.size
  }

  // ---- inbound: requests and telemetry ------------------------------------------------------

  /** A `dh/request` payload: read within the limits, then queued behind earlier requests. */
  request (payload: Buffer): void {
    if (this.closed) return
    const read = readFrame(payload, { maxBytes: this.options.limits.maxPacketBytes })
    if (read.kind === 'too-big') {
      this.cutOff('request too big', REASON.packetTooLarge)
      return
    }
    this.queue.push(read.bytes, async () => {
      if (read.kind !== 'json') {
        this.reply(ERROR_ACTION, errorFrame(null, null, 400, read.kind === 'too-deep' ? read.message : 'Malformed Json received.'))
        return
      }
      const frame = read.value
      if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
        this.reply(ERROR_ACTION, errorFrame(null, null, 400, 'Malformed Json received.'))
        return
      }
      await this.handle(frame as RequestFrame)
    })
  }

  /**
   * Telemetry: a publish on `dh/notification/<networkId>/<deviceTypeId>/<deviceId>/<name>` is the
   * `notification/insert` action with the payload (a JSON object, or empty) as its parameters.
   */
  telemetry (target: { deviceId: string, name: string } | { error: string }, payload: Buffer): void {
    if (this.closed) return
    const read = payload.length === 0 ? { kind: 'json' as const, value: undefined, bytes: 0 } : readFrame(payload, { maxBytes: this.options.limits.maxPacketBytes })
    this.queue.push(read.bytes, async () => {
      const action = 'notification/insert'
      if ('error' in target) {
        this.reply(action, errorFrame(action, null, 400, target.error))
        return
      }
      if (read.kind !== 'json' || (read.value !== undefined && (read.value === null || typeof read.value !== 'object' || Array.isArray(read.value)))) {
        const message = read.kind === 'too-deep' ? read.message : 'The payload of a notification publish is a JSON object (its parameters)'
        this.reply(action, errorFrame(action, null, 400, message))
        return
      }
      const notification = { notification: target.name, ...(read.value === undefined ? {} : { parameters: read.value }) }
      await this.handle({ action, deviceId: target.deviceId, notification }, false, true)
    })
  }

  /**
   * Runs one action as the WebSocket session does; replies go to `dh/response/<action>@<clientId>`.
   * `telemetry`: the principal may be the one verified for an earlier publish (telemetryPrincipal).
   */
  private async handle (frame: RequestFrame, replyOnSuccess = true, telemetry = false): Promise<void> {
    const { action, requestId } = frame
    if (typeof action !== 'string') {
      this.reply(ERROR_ACTION, errorFrame(null, requestId, 400, '\'action\' field could not be parsed to known endpoint'))
      return
    }
    const handler = action === 'authenticate' ? AUTHENTICATE : Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined
    if (handler === undefined) {
      this.reply(action, errorFrame(action, requestId, 400, `Illegal argument: ${action}`))
      return
    }
    try {
      const result = action === 'authenticate'
        ? await this.authenticate(frame.token)
        : telemetry
          ? await this.runTelemetry(handler, frame)
          : await handler.run({ hub: this.options.hub, session: this, principal: handler.public === true ? this.principal : await this.recheck() }, frame)
      const reply = result instanceof SubscribeReply ? { subscriptionId: result.subscriptionId } : result
      if (replyOnSuccess) this.reply(action, successFrame(action, requestId, reply))
      if (result instanceof SubscribeReply) result.start()
    } catch (error) {
      const known = statusOf(error)
      if (known === undefined) this.options.logger.error({ err: error, action }, 'mqtt action failed')
      this.reply(action, errorFrame(action, requestId, known?.code ?? 400, known?.message ?? 'Invalid request parameters'))
    }
  }

  /** `authenticate`: replaces the session principal, as over WebSocket. */
  private async authenticate (token: unknown): Promise<undefined> {
    if (typeof token !== 'string' || token === '') throw unauthorized()
    const result = await this.options.hub.tokens.verifyAccessToken(token)
    if ('failure' in result) throw unauthorized(result.failure === 'expired' ? 'Token expired' : 'Invalid credentials')
    await this.options.hub.tokens.noteSessionLogin(result.principal)
    this.principal = result.principal
    this.token = token
    this.verified = undefined
    clearTimeout(this.authTimer)
    return undefined
  }

  /**
   * A telemetry publish under the principal verified for an earlier one; refused under it (401,
   * 403), it runs once more under a fresh check, so rights granted since count at once.
   */
  private async runTelemetry (handler: ActionHandler, frame: RequestFrame): Promise<object | undefined> {
    const reused = this.verified !== undefined
    try {
      return await handler.run({ hub: this.options.hub, session: this, principal: await this.telemetryPrincipal() }, frame)
    } catch (error) {
      const code = statusOf(error)?.code
      if (!reused || (code !== 401 && code !== 403)) throw error
      this.verified = undefined
      return await handler.run({ hub: this.options.hub, session: this, principal: await this.telemetryPrincipal() }, frame)
    }
  }

  /**
   * D10 for telemetry, checked once per {@link VERIFIED_FOR_MS} instead of on every publish (a
   * device may publish hundreds a second): the principal verified last serves until its token
   * expires, a `revoke` names it or a `resync` says events were lost, whichever comes first.
   */
  private async telemetryPrincipal (): Promise<Principal | undefined> {
    if (this.token === undefined) return this.principal
    const { hub } = this.options
    const verified = this.verified
    if (verified !== undefined && performance.now() - verified.at < VERIFIED_FOR_MS && !expired(verified.principal, hub.clock.now())) {
      return verified.principal
    }
    this.verified = undefined
    // Work queued before a release may still run: a released session registers nothing (it would leak).
    if (this.closed) return await this.recheck()
    this.stopHearing ??= hub.router.register({ kinds: [] }, (event) => {
      if (event.kind !== 'resync' && !(event.kind === 'revoke' && revokesPrincipal(event, this.principal))) return
      this.verified = undefined
      this.revocations++
    })
    const at = performance.now()
    const before = this.revocations
    const principal = await this.recheck()
    // A revocation heard during the check may have come after the rows it read: not kept then.
    if (!this.closed && this.revocations === before) this.verified = { principal, at }
    return principal
  }

  /** The token's expiry and its user are checked again on every action (D10). */
  private async recheck (): Promise<Principal | undefined> {
    if (this.token === undefined) return this.principal
    const result = await this.options.hub.tokens.verifyAccessToken(this.token)
    if ('failure' in result) throw unauthorized(result.failure === 'expired' ? 'Token expired' : 'Unauthorized')
    this.principal = result.principal
    return result.principal
  }

  // ---- topic subscriptions ------------------------------------------------------------------

  /** Whether the client may hold one more topic. */
  hasRoomForTopic (topic: string): boolean {
    return this.topics.has(topic) || this.topicCount < this.options.limits.maxSubscriptions
  }

  /** `dh/response/<action>@<clientId>`: replies to `<action>` are published to this client. */
  subscribeResponse (topic: string): void {
    this.responses.add(topic)
  }

  /**
   * An event topic becomes the subscribe action it stands for (same checks as over WebSocket);
   * the stream starts once the SUBACK is out ({@link startSubscribed}). Resolves to the granted
   * QoS, or to the error reply when the action refused it (the SUBACK then says 0x80).
   */
  async subscribeTopic (topic: string, event: EventTopic, filter: EventFilter, qos: number, after?: number): Promise<{ granted: 0 | 1 } | { refused: string }> {
    if (this.closed) return { refused: 'closed' }
    const existing = this.topics.get(topic)
    const granted: 0 | 1 = qos >= 1 ? 1 : 0
    if (existing !== undefined) {
      const held = this.subscriptions.get(existing)
      if (held !== undefined) held.qos = granted
      return { granted }
    }
    const { kind, input } = subscriptionOf(event, filter)
    const action = `${kind}/subscribe`
    const frame: RequestFrame = { action, ...input }
    try {
      const handler = ACTIONS[action]
      if (handler === undefined) throw new Error(`no action ${action}`)
      const result = after !== undefined && kind === 'command'
        ? await this.resume(input, frame, after)
        : await handler.run({ hub: this.options.hub, session: this, principal: await this.recheck() }, frame)
      if (!(result instanceof SubscribeReply)) throw new Error(`${action} gave no subscription`)
      const subscription = this.subscriptions.get(result.subscriptionId)
      if (subscription === undefined || this.closed) return { refused: 'closed' }
      subscription.topic = topic
      subscription.event = event
      subscription.qos = granted
      this.topics.set(topic, result.subscriptionId)
      this.unstarted.push(result.start)
      return { granted }
    } catch (error) {
      const known = statusOf(error)
      if (known === undefined) this.options.logger.error({ err: error, topic }, 'mqtt subscribe failed')
      const message = known?.message ?? 'Invalid request parameters'
      this.reply(action, errorFrame(action, null, known?.code ?? 400, message))
      return { refused: message }
    }
  }

  /**
   * A durable session's command subscription (durable-sessions.ts), resumed from the stored
   * cursor of the last acknowledged command: every command after it, however many, losslessly.
   */
  private async resume (input: SubscriptionInput, frame: RequestFrame, after: number): Promise<unknown> {
    const stream = await this.options.hub.commands.subscribe(await this.recheck(), { ...input, after, backlogLimit: Infinity })
    return this.addSubscription('command', stream, frame, input)
  }

  /** Starts what SUBSCRIBE added, after its SUBACK (pushes never precede it). */
  startSubscribed (): void {
    for (const start of this.unstarted.splice(0)) start()
  }

  /** UNSUBSCRIBE of one topic: its own subscription ends, every other stays. */
  unsubscribeTopic (topic: string): void {
    const id = this.topics.get(topic)
    this.topics.delete(topic)
    if (id !== undefined) this.closeSubscription(id)
    this.responses.delete(topic)
  }

  // ---- ActionSession ------------------------------------------------------------------------

  addSubscription (kind: SubscriptionKind, stream: MessageStream<object>, frame: RequestFrame, input: SubscriptionInput): object {
    if (this.closed) {
      stream.close()
      throw unauthorized()
    }
    if (this.subscriptions.size >= this.options.limits.maxSubscriptions) {
      stream.close()
      throw tooManySubscriptions(this.options.limits.maxSubscriptions)
    }
    const subscriptionId = this.options.nextSubscriptionId()
    const info: SubscriptionInfo = {
      subscriptionId,
      type: kind,
      deviceId: input.deviceId ?? null,
      networkIds: input.networkIds ?? null,
      deviceTypeIds: input.deviceTypeIds ?? null,
      names: input.names ?? null,
      timestamp: frame.timestamp ?? null
    }
    const event: EventTopic = kind === 'notification' ? 'notification' : input.returnUpdatedCommands === true ? 'command_update' : 'command'
    const subscription: Subscription = { info, stream, event, topic: undefined, qos: 0 }
    this.subscriptions.set(subscriptionId, subscription)
    return new SubscribeReply(subscriptionId, () => this.startStream(subscription))
  }

  private startStream (subscription: Subscription): void {
    const { info: { subscriptionId, type } } = subscription
    const action = type === 'notification' ? 'notification/insert' : subscription.event === 'command_update' ? 'command/update' : 'command/insert'
    subscription.stream.start(({ item, cursor }) => {
      // Overlapping topic filters of one client deliver a message once (MQTT-3.3.5-1), as
      // devicehive-mqtt does; subscriptions made by a request are WebSocket ones: each pushes.
      if (subscription.topic !== undefined && this.deliveredBefore(subscription.event, item as Record<string, unknown>)) return
      this.publish(pushTopic(subscription.event, item as Record<string, unknown>), pushFrame(action, type, item, subscriptionId), subscription.qos, { topic: subscription.topic, cursor })
    }, (error) => {
      this.subscriptions.delete(subscriptionId)
      if (error instanceof StreamRevokedError) {
        // The user's rights changed: the session's principal is stale. Disconnecting makes the
        // client connect again, authenticate and subscribe under its new rights.
        this.options.logger.info({ clientId: this.clientId }, 'mqtt session revoked')
        this.cutOff(error.message, REASON.notAuthorized)
        return
      }
      this.options.logger.error({ err: error }, 'mqtt subscription failed')
    })
  }

  /**
   * Whether a topic subscription already pushed this message (bounded memory of the latest keys:
   * the copies of one message reach the streams of one client together).
   */
  private deliveredBefore (event: EventTopic, item: Record<string, unknown>): boolean {
    if (this.topics.size < 2) return false
    return this.delivered.seen(`${event}:${String(item.id)}:${event === 'command_update' ? String(item.lastUpdated) : ''}`)
  }

  unsubscribe (kind: SubscriptionKind, id: number): boolean {
    const subscription = this.subscriptions.get(id)
    if (subscription === undefined || subscription.info.type !== kind) return false
    this.closeSubscription(id)
    return true
  }

  unsubscribeAll (kind: SubscriptionKind): void {
    for (const [id, subscription] of this.subscriptions) {
      if (subscription.info.type === kind) this.closeSubscription(id)
    }
  }

  listSubscriptions (kinds: readonly SubscriptionKind[]): SubscriptionInfo[] {
    return [...this.subscriptions.values()].filter((s) => kinds.includes(s.info.type)).map((s) => s.info)
  }

  private closeSubscription (id: number): void {
    const subscription = this.subscriptions.get(id)
    if (subscription === undefined) return
    subscription.stream.close()
    this.subscriptions.delete(id)
    if (subscription.topic !== undefined) this.topics.delete(subscription.topic)
  }

  // ---- outbound ------------------------------------------------------------------------------

  /** A reply, published only when the client subscribed to its response topic (as DeviceHive's broker). */
  private reply (action: string, frame: string): void {
    const topic = responseTopic(action, this.clientId)
    if (this.responses.has(topic)) this.publish(topic, frame, 0)
  }

  /** To this client only; a client that stopped reading past the buffer cap is cut off. */
  private publish (topic: string, payload: string, qos: 0 | 1, carries: SentMessage = {}): void {
    if (this.closed) return
    const { client } = this.options
    const buffered = (client.conn as { writableLength?: number }).writableLength ?? 0
    if (buffered + payload.length > this.options.limits.maxBufferedBytes) {
      this.cutOff('outbound buffer full', REASON.quotaExceeded)
      return
    }
    if (qos === 1) this.options.sent?.(carries)
    client.publish({ cmd: 'publish', topic, payload: Buffer.from(payload), qos, retain: false, dup: false }, (error) => {
      if (error !== undefined && error !== null) this.options.logger.debug({ err: error }, 'mqtt publish failed')
    })
  }

  /**
   * Ends the session and its connection: an MQTT 5 client gets a DISCONNECT with `reasonCode`
   * first; MQTT 3.1.1 has no server DISCONNECT, the connection just closes.
   */
  cutOff (reason: string, reasonCode: number = REASON.unspecifiedError): void {
    if (this.closed) return
    this.options.logger.info({ clientId: this.clientId, reason }, 'mqtt session closed')
    this.release()
    this.options.disconnect?.(reasonCode, reason)
    this.options.client.close()
  }

  /** Everything the session holds goes: streams (doorbell listeners) and the timer. Idempotent. */
  release (): void {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.authTimer)
    this.stopHearing?.()
    this.verified = undefined
    for (const subscription of this.subscriptions.values()) subscription.stream.close()
    this.subscriptions.clear()
    this.topics.clear()
    this.responses.clear()
    this.delivered.clear()
    this.unstarted.length = 0
    this.options.onRelease?.(this)
  }
}

/** Whether the token a principal was verified with has expired by `now` (the system principal never does). */
function expired (principal: Principal | undefined, now: number): boolean {
  return principal !== undefined && principal.kind !== 'system' && principal.token.e < now
}
