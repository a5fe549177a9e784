/**
 * MQTT 5 reason codes (OASIS MQTT 5.0 §2.4) devicehub sends, and how the 3.1.1 answers aedes gives
 * become them for an MQTT 5 client (mqtt5-front-end.ts). No framework here: the session names a
 * reason when it cuts a client off, whatever protocol the client speaks.
 */
import { parseTopic } from './mqtt-topics.js'

export const REASON = {
  success: 0x00,
  noSubscriptionExisted: 0x11,
  unspecifiedError: 0x80,
  malformedPacket: 0x81,
  protocolError: 0x82,
  implementationSpecificError: 0x83,
  unsupportedProtocolVersion: 0x84,
  clientIdentifierNotValid: 0x85,
  badUserNameOrPassword: 0x86,
  notAuthorized: 0x87,
  serverUnavailable: 0x88,
  serverShuttingDown: 0x8b,
  badAuthenticationMethod: 0x8c,
  keepAliveTimeout: 0x8d,
  sessionTakenOver: 0x8e,
  topicFilterInvalid: 0x8f,
  receiveMaximumExceeded: 0x93,
  topicAliasInvalid: 0x94,
  packetTooLarge: 0x95,
  messageRateTooHigh: 0x96,
  quotaExceeded: 0x97,
  sharedSubscriptionsNotSupported: 0x9e
} as const

/** 3.1.1 CONNACK return code (aedes') → MQTT 5 CONNACK reason code. */
const CONNACK_REASONS: Record<number, number> = {
  0: REASON.success,
  1: REASON.unsupportedProtocolVersion,
  2: REASON.clientIdentifierNotValid,
  3: REASON.serverUnavailable,
  4: REASON.badUserNameOrPassword,
  5: REASON.notAuthorized
}

/**
 * @example
 * connackReason(4) // 0x86 bad user name or password
 */
export function connackReason (returnCode: number): number {
  return CONNACK_REASONS[returnCode] ?? REASON.unspecifiedError
}

/**
 * The SUBACK reason code of a topic filter 3.1.1 refused with 0x80: a shared subscription is not
 * supported, a filter outside DeviceHive's topics is not allowed here, a DeviceHive topic the
 * client may not have (out of scope, anonymous, another client's response topic, too many) is not
 * authorized. A granted QoS is 0 or 1.
 *
 * @example
 * subackReason(0x80, 'sensors/#', 'c1')          // 0x8f topic filter invalid
 * subackReason(0x80, 'dh/notification/#', 'c1')  // 0x87 not authorized
 */
export function subackReason (granted: number, topic: string, clientId: string): number {
  // DeviceHive pushes go out with QoS 0 or 1 (granted-qos.ts already lowers what aedes is asked).
  if (granted < 0x80) return Math.min(granted, 1)
  if (topic.startsWith('$share/')) return REASON.sharedSubscriptionsNotSupported
  // Another client's response topic parses as invalid: it is the client that may not have it.
  if (topic.startsWith('dh/response/')) return REASON.notAuthorized
  const parsed = parseTopic(topic, clientId)
  return parsed.kind === 'other' || parsed.kind === 'invalid' ? REASON.topicFilterInvalid : REASON.notAuthorized
}
