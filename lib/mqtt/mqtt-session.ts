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
import type { DeviceHub } from '../core/devicehub.js'
import { unauthorized } from '../core/errors.js'
import type { MessageStream } from '../core/realtime/message-stream.js'
import type { FrameQueue } from '../http/frame-queue.js'
import { createFrameQueue } from '../http/frame-queue.js'
import type { ActionSession, SubscriptionInfo, SubscriptionInput, SubscriptionKind } from '../http/websocket/action-session.js'
import type { RequestFrame } from '../http/websocket/frames.js'
import type { SentMessage } from './durable-sessions.js'
import type { MqttLimits } from './mqtt-limits.js'
import type { EventFilter, EventTopic } from './mqtt-topics.js'
import type { TelemetryTarget } from './mqtt-telemetry.js'
import { pausableClient } from './client-pause.js'
import { ownerOf } from './mqtt-auth.js'
import { MqttRequests } from './mqtt-requests.js'
import { MqttSubscriptions } from './mqtt-subscriptions.js'
import { MqttTelemetry } from './mqtt-telemetry.js'
import { responseTopic } from './mqtt-topics.js'
import { REASON } from './mqtt5-reason-codes.js'

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

export class MqttSession implements ActionSession {
  principal: Principal | undefined
  private token: string | undefined
  readonly restServerUrl: string
  readonly clientAddress: string | undefined
  /** devicehive-mqtt's `command/update` replaces `parameters` too (its integration suite asserts it). */
  readonly updatesCommandParameters = true
  private readonly subscriptions: MqttSubscriptions
  private readonly telemetryPath: MqttTelemetry
  private readonly requests: MqttRequests
  private readonly queue: FrameQueue
  private authTimer: NodeJS.Timeout | undefined
  private closed = false

  constructor (private readonly options: MqttSessionOptions) {
    this.principal = options.principal
    this.token = options.token
    this.restServerUrl = options.restServerUrl
    this.clientAddress = options.clientAddress
    this.queue = this.createQueue()
    const { hub, logger, limits } = options
    const isClosed = (): boolean => this.closed
    const recheck = (): Promise<Principal | undefined> => this.recheck()
    const reply = (action: string, frame: string): void => this.reply(action, frame)
    const enqueue = (bytes: number, run: () => Promise<void>): void => void this.queue.push(bytes, run)
    const cutOff = (reason: string, reasonCode: number): void => this.cutOff(reason, reasonCode)
    const principal = (): Principal | undefined => this.principal
    this.subscriptions = new MqttSubscriptions({
      hub, logger, limits, session: this, isClosed, recheck, reply, cutOff,
      clientId: () => this.clientId,
      nextSubscriptionId: () => options.nextSubscriptionId(),
      publish: (topic, payload, qos, carries) => this.publish(topic, payload, qos, carries)
    })
    this.requests = new MqttRequests({
      hub, logger, session: this, maxPacketBytes: limits.maxPacketBytes, isClosed, principal, recheck, enqueue, reply, cutOff,
      authenticated: (principal, token) => {
        this.principal = principal
        this.token = token
        this.telemetryPath.forget()
        clearTimeout(this.authTimer)
      },
      runTelemetry: (handler, frame) => this.telemetryPath.run(handler, frame)
    })
    this.telemetryPath = new MqttTelemetry({
      hub, session: this, maxPacketBytes: limits.maxPacketBytes, isClosed, principal, recheck, enqueue, reply,
      token: () => this.token,
      handle: (frame) => this.requests.handle(frame, false, true)
    })
    if (this.principal === undefined) {
      this.authTimer = setTimeout(() => {
        if (this.principal === undefined) this.cutOff('authentication timeout', REASON.notAuthorized)
      }, options.limits.authTimeoutMs)
      this.authTimer.unref()
    }
  }

  /** The session's requests and telemetry, in arrival order, with backpressure on the connection. */
  private createQueue (): FrameQueue {
    const { client, limits, logger } = this.options
    const gate = pausableClient(client)
    return createFrameQueue({
      maxPending: limits.maxPendingRequests,
      onOverflow: () => this.cutOff('too many pending requests', REASON.messageRateTooHigh),
      onError: (error) => {
        logger.error({ err: error }, 'mqtt request failed')
        this.cutOff('request handling failed', REASON.implementationSpecificError)
      },
      // Backpressure: reading from the connection pauses while much is queued.
      pause: () => gate.pause(),
      resume: () => gate.resume()
    })
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
    return this.subscriptions.topicCount
  }

  get subscriptionCount (): number {
    return this.subscriptions.count
  }

  // ---- inbound: requests and telemetry ------------------------------------------------------

  /** A `dh/request` payload: read within the limits, then queued behind earlier requests (mqtt-requests.ts). */
  request (payload: Buffer): void {
    this.requests.request(payload)
  }

  /** Telemetry: a publish on `dh/notification/...`, the `notification/insert` action (mqtt-telemetry.ts). */
  telemetry (target: TelemetryTarget, payload: Buffer): void {
    this.telemetryPath.publish(target, payload)
  }

  /** The token's expiry and its user are checked again on every action (D10). */
  private async recheck (): Promise<Principal | undefined> {
    if (this.token === undefined) return this.principal
    const result = await this.options.hub.tokens.verifyAccessToken(this.token)
    if ('failure' in result) throw unauthorized(result.failure === 'expired' ? 'Token expired' : 'Unauthorized')
    this.principal = result.principal
    return result.principal
  }

  // ---- topic subscriptions (mqtt-subscriptions.ts) -------------------------------------------

  /** Whether the client may hold one more topic. */
  hasRoomForTopic (topic: string): boolean {
    return this.subscriptions.hasRoomForTopic(topic)
  }

  /** `dh/response/<action>@<clientId>`: replies to `<action>` are published to this client. */
  subscribeResponse (topic: string): void {
    this.subscriptions.subscribeResponse(topic)
  }

  /** An event topic becomes the subscribe action it stands for ({@link MqttSubscriptions.subscribeTopic}). */
  subscribeTopic (
    topic: string, event: EventTopic, filter: EventFilter, qos: number, after?: number
  ): Promise<{ granted: 0 | 1 } | { refused: string }> {
    return this.subscriptions.subscribeTopic(topic, event, filter, qos, after)
  }

  /** Starts what SUBSCRIBE added, after its SUBACK (pushes never precede it). */
  startSubscribed (): void {
    this.subscriptions.startSubscribed()
  }

  /** UNSUBSCRIBE of one topic: its own subscription ends, every other stays. */
  unsubscribeTopic (topic: string): void {
    this.subscriptions.unsubscribeTopic(topic)
  }

  // ---- ActionSession ------------------------------------------------------------------------

  addSubscription (kind: SubscriptionKind, stream: MessageStream<object>, frame: RequestFrame, input: SubscriptionInput): object {
    return this.subscriptions.add(kind, stream, frame, input)
  }

  unsubscribe (kind: SubscriptionKind, id: number): boolean {
    return this.subscriptions.unsubscribe(kind, id)
  }

  unsubscribeAll (kind: SubscriptionKind): void {
    this.subscriptions.unsubscribeAll(kind)
  }

  listSubscriptions (kinds: readonly SubscriptionKind[]): SubscriptionInfo[] {
    return this.subscriptions.list(kinds)
  }

  // ---- outbound ------------------------------------------------------------------------------

  /** A reply, published only when the client subscribed to its response topic (as DeviceHive's broker). */
  private reply (action: string, frame: string): void {
    const topic = responseTopic(action, this.clientId)
    if (this.subscriptions.hasResponse(topic)) this.publish(topic, frame, 0)
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
    this.telemetryPath.release()
    this.subscriptions.clear()
    this.options.onRelease?.(this)
  }
}
