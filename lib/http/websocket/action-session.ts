/**
 * What an action may do with the session that received it. A leaf: actions.ts programs
 * against this interface, session.ts implements it, and neither imports the other's module
 * for it (session.ts runs the actions).
 */
import type { MessageStream } from '../../core/realtime/message-stream.js'
import type { RequestFrame } from './frames.js'

export type SubscriptionKind = 'command' | 'notification'

/** What `subscription/list` reports: the values the subscription was created with (§6.4). */
export interface SubscriptionInfo {
  subscriptionId: number
  type: SubscriptionKind
  deviceId: string | null
  networkIds: number[] | null
  deviceTypeIds: number[] | null
  names: string[] | null
  timestamp: unknown
}

/** The values a subscribe action was given (reported back by `subscription/list`). */
export interface SubscriptionInput {
  deviceId?: string
  networkIds?: number[]
  deviceTypeIds?: number[]
  names?: string[]
  returnUpdatedCommands?: boolean
}

/**
 * The `subscription/list` entry of a new subscription (WebSocket and MQTT sessions alike).
 *
 * @example
 * subscriptionInfo(7, 'notification', { deviceId: 'd1' }, frame) // { subscriptionId: 7, type: 'notification', deviceId: 'd1', ... }
 */
export function subscriptionInfo (
  subscriptionId: number, type: SubscriptionKind, input: SubscriptionInput, frame: RequestFrame
): SubscriptionInfo {
  return {
    subscriptionId,
    type,
    deviceId: input.deviceId ?? null,
    networkIds: input.networkIds ?? null,
    deviceTypeIds: input.deviceTypeIds ?? null,
    names: input.names ?? null,
    timestamp: frame.timestamp ?? null
  }
}

export interface ActionSession {
  /** `server/info`'s `restServerUrl`. */
  readonly restServerUrl: string
  /** The client's address: the `token` action is throttled by it. */
  readonly clientAddress: string | undefined
  /**
   * Whether `command/update` also replaces the command's `parameters` (the MQTT endpoint, as
   * devicehive-mqtt's suite expects); WebSocket reads `status` and `result` only (§6.4).
   */
  readonly updatesCommandParameters: boolean
  /** Registers a stream opened by a subscribe action; the returned reply starts it once sent. */
  addSubscription(kind: SubscriptionKind, stream: MessageStream<object>, frame: RequestFrame, input: SubscriptionInput): object
  /** Closes one subscription of `kind`; false when there is none with that id. */
  unsubscribe(kind: SubscriptionKind, id: number): boolean
  unsubscribeAll(kind: SubscriptionKind): void
  listSubscriptions(kinds: readonly SubscriptionKind[]): SubscriptionInfo[]
}
