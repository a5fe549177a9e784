/**
 * The subscriptions of one MQTT session: topic subscriptions (each a core subscription of this
 * client alone, pushed to this client alone), the subscriptions made by subscribe requests on
 * `dh/request` (WebSocket ones), the response topics, and their streams.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Principal } from '../core/auth/principal.js'
import type { DeviceHub } from '../core/devicehub.js'
import { unauthorized } from '../core/errors.js'
import type { MessageStream } from '../core/realtime/message-stream.js'
import { StreamRevokedError } from '../core/realtime/message-stream.js'
import type { ActionSession, SubscriptionInfo, SubscriptionInput, SubscriptionKind } from '../http/websocket/action-session.js'
import { subscriptionInfo } from '../http/websocket/action-session.js'
import { ACTIONS } from '../http/websocket/actions.js'
import type { RequestFrame } from '../http/websocket/frames.js'
import { errorFrame, pushFrame, statusOf } from '../http/websocket/frames.js'
import { tooManySubscriptions } from '../http/websocket/session.js'
import type { SentMessage } from './durable-sessions.js'
import type { MqttLimits } from './mqtt-limits.js'
import type { EventFilter, EventTopic } from './mqtt-topics.js'
import { pushTopic, subscriptionOf } from './mqtt-topics.js'
import { createRecentKeys } from './recent-keys.js'
import { REASON } from './mqtt5-reason-codes.js'

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

/** The reply of a subscribe action: started once the reply (or the SUBACK) is out. */
export class SubscribeReply {
  constructor (readonly subscriptionId: number, readonly start: () => void) {}
}

/** What the subscriptions need of their session (mqtt-session.ts `MqttSession`). */
export interface SubscriptionHost {
  readonly hub: DeviceHub
  readonly logger: FastifyBaseLogger
  readonly limits: MqttLimits
  /** The session actions run with. */
  readonly session: ActionSession
  clientId(): string
  isClosed(): boolean
  /** A new subscription id (shared with the WebSocket sessions' numbering rule). */
  nextSubscriptionId(): number
  /** A fresh check of the token (D10); updates the session principal. */
  recheck(): Promise<Principal | undefined>
  reply(action: string, frame: string): void
  publish(topic: string, payload: string, qos: 0 | 1, carries?: SentMessage): void
  cutOff(reason: string, reasonCode: number): void
}

/** One session's subscriptions, topics and streams; the session's ActionSession calls land here. */
export class MqttSubscriptions {
  private readonly subscriptions = new Map<number, Subscription>()
  /** Topic filter → its subscription id. */
  private readonly topics = new Map<string, number>()
  /** Response topics the client subscribed to (`dh/response/<action>@<clientId>`). */
  private readonly responses = new Set<string>()
  /** Keys of the messages topic subscriptions pushed lately (see deliveredBefore). */
  private readonly delivered = createRecentKeys(DELIVERED_KEYS)
  /** Subscriptions made by SUBSCRIBE, started once the SUBACK is written. */
  private readonly unstarted: Array<() => void> = []

  constructor (private readonly host: SubscriptionHost) {}

  /** Topic subscriptions held (event topics and response topics), against `maxSubscriptions`. */
  get topicCount (): number {
    return this.topics.size + this.responses.size
  }

  get count (): number {
    return this.subscriptions.size
  }

  /** Whether the client subscribed to this response topic. */
  hasResponse (topic: string): boolean {
    return this.responses.has(topic)
  }

  /** Whether the client may hold one more topic. */
  hasRoomForTopic (topic: string): boolean {
    return this.topics.has(topic) || this.topicCount < this.host.limits.maxSubscriptions
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
  async subscribeTopic (
    topic: string, event: EventTopic, filter: EventFilter, qos: number, after?: number
  ): Promise<{ granted: 0 | 1 } | { refused: string }> {
    const host = this.host
    if (host.isClosed()) return { refused: 'closed' }
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
        : await handler.run({ hub: host.hub, session: host.session, principal: await host.recheck() }, frame)
      if (!(result instanceof SubscribeReply)) throw new Error(`${action} gave no subscription`)
      const subscription = this.subscriptions.get(result.subscriptionId)
      if (subscription === undefined || host.isClosed()) return { refused: 'closed' }
      subscription.topic = topic
      subscription.event = event
      subscription.qos = granted
      this.topics.set(topic, result.subscriptionId)
      this.unstarted.push(result.start)
      return { granted }
    } catch (error) {
      const known = statusOf(error)
      if (known === undefined) host.logger.error({ err: error, topic }, 'mqtt subscribe failed')
      const message = known?.message ?? 'Invalid request parameters'
      host.reply(action, errorFrame(action, null, known?.code ?? 400, message))
      return { refused: message }
    }
  }

  /**
   * A durable session's command subscription (durable-sessions.ts), resumed from the stored
   * cursor of the last acknowledged command: every command after it, however many, losslessly.
   */
  private async resume (input: SubscriptionInput, frame: RequestFrame, after: number): Promise<unknown> {
    const stream = await this.host.hub.commands.subscribe(await this.host.recheck(), { ...input, after, backlogLimit: Infinity })
    return this.add('command', stream, frame, input)
  }

  /** Starts what SUBSCRIBE added, after its SUBACK (pushes never precede it). */
  startSubscribed (): void {
    for (const start of this.unstarted.splice(0)) start()
  }

  /** UNSUBSCRIBE of one topic: its own subscription ends, every other stays. */
  unsubscribeTopic (topic: string): void {
    const id = this.topics.get(topic)
    this.topics.delete(topic)
    if (id !== undefined) this.close(id)
    this.responses.delete(topic)
  }

  /** ActionSession `addSubscription`: a stream opened by a subscribe action, started by the reply's `start`. */
  add (kind: SubscriptionKind, stream: MessageStream<object>, frame: RequestFrame, input: SubscriptionInput): object {
    const { limits } = this.host
    if (this.host.isClosed()) {
      stream.close()
      throw unauthorized()
    }
    if (this.subscriptions.size >= limits.maxSubscriptions) {
      stream.close()
      throw tooManySubscriptions(limits.maxSubscriptions)
    }
    const subscriptionId = this.host.nextSubscriptionId()
    const info = subscriptionInfo(subscriptionId, kind, input, frame)
    const event: EventTopic = kind === 'notification'
      ? 'notification'
      : input.returnUpdatedCommands === true ? 'command_update' : 'command'
    const subscription: Subscription = { info, stream, event, topic: undefined, qos: 0 }
    this.subscriptions.set(subscriptionId, subscription)
    return new SubscribeReply(subscriptionId, () => this.startStream(subscription))
  }

  private startStream (subscription: Subscription): void {
    const host = this.host
    const { info: { subscriptionId, type } } = subscription
    const action = type === 'notification'
      ? 'notification/insert'
      : subscription.event === 'command_update' ? 'command/update' : 'command/insert'
    subscription.stream.start(({ item, cursor }) => {
      const message = item as Record<string, unknown>
      // Overlapping topic filters of one client deliver a message once (MQTT-3.3.5-1), as
      // devicehive-mqtt does; subscriptions made by a request are WebSocket ones: each pushes.
      if (subscription.topic !== undefined && this.deliveredBefore(subscription.event, message)) return
      const topic = pushTopic(subscription.event, message)
      host.publish(topic, pushFrame(action, type, item, subscriptionId), subscription.qos, { topic: subscription.topic, cursor })
    }, (error) => {
      this.subscriptions.delete(subscriptionId)
      if (error instanceof StreamRevokedError) {
        // The user's rights changed: the session's principal is stale. Disconnecting makes the
        // client connect again, authenticate and subscribe under its new rights.
        host.logger.info({ clientId: host.clientId() }, 'mqtt session revoked')
        host.cutOff(error.message, REASON.notAuthorized)
        return
      }
      host.logger.error({ err: error }, 'mqtt subscription failed')
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

  /** ActionSession `unsubscribe`: false when there is no subscription of `kind` with that id. */
  unsubscribe (kind: SubscriptionKind, id: number): boolean {
    const subscription = this.subscriptions.get(id)
    if (subscription === undefined || subscription.info.type !== kind) return false
    this.close(id)
    return true
  }

  unsubscribeAll (kind: SubscriptionKind): void {
    for (const [id, subscription] of this.subscriptions) {
      if (subscription.info.type === kind) this.close(id)
    }
  }

  list (kinds: readonly SubscriptionKind[]): SubscriptionInfo[] {
    return [...this.subscriptions.values()].filter((s) => kinds.includes(s.info.type)).map((s) => s.info)
  }

  private close (id: number): void {
    const subscription = this.subscriptions.get(id)
    if (subscription === undefined) return
    subscription.stream.close()
    this.subscriptions.delete(id)
    if (subscription.topic !== undefined) this.topics.delete(subscription.topic)
  }

  /** The session is released: every stream (doorbell listeners) closed, everything forgotten. */
  clear (): void {
    for (const subscription of this.subscriptions.values()) subscription.stream.close()
    this.subscriptions.clear()
    this.topics.clear()
    this.responses.clear()
    this.delivered.clear()
    this.unstarted.length = 0
  }
}
