/**
 * MQTT 5 packets and their 3.1.1 forms, one way or the other (mqtt5-front-end.ts): the CONNECT
 * aedes is given for a client's, and the CONNACK and SUBACK the client is given for aedes'.
 */
import { randomUUID } from 'node:crypto'
import type { IConnackPacket, IConnectPacket, ISubackPacket, Packet } from 'mqtt-packet'
import { REASON, connackReason, subackReason } from './mqtt5-reason-codes.js'

/** A session expiry interval that means: the session never expires (MQTT 5 §3.1.2.11.2). */
export const NEVER_EXPIRES = 0xffffffff

/** What the CONNECT asked for that the CONNACK answers. */
export interface ConnectInfo {
  clientId: string
  /** The client sent an empty client id: the CONNACK names the one assigned. */
  assigned: boolean
  /** A session expiry above 0: the session outlives the connection. */
  persistent: boolean
  /** Persistent with a clean start: the stored session is discarded first. */
  startsFresh: boolean
  /** No expiry and no clean start: the stored session is resumed, and ends with the connection (MQTT 5 §3.1.2.4). */
  resumesOnce: boolean
  requestedExpiry: number
  /** The session expiry interval the server keeps (seconds): the one asked for, at most the server's maximum. */
  grantedExpiry: number
  /** The keep-alive the server imposes (the client asked for none, or more than the limit). */
  serverKeepAlive: number | undefined
  /** The largest packet the client takes (MQTT 5 counts the whole packet). */
  maxPacket: number
  /** QoS 1 and 2 publishes the client takes unacknowledged at once (MQTT 5 §3.1.2.11.3). */
  receiveMaximum: number
}

export interface ServerSide {
  /** Largest packet a client may send (remaining length), as for 3.1.1 (MqttLimits.maxPacketBytes). */
  maxPacketBytes: number
  /** 0 = any keep-alive; else the most a client may have (the CONNACK's server keep alive says it). */
  maxKeepAliveSeconds: number
  /** The CONNACK's receive maximum: inbound QoS 2 publishes awaiting PUBREL (MqttLimits.maxInflightInbound). */
  receiveMaximum: number
  /** The longest session expiry interval kept, in seconds ({@link NEVER_EXPIRES}: any). */
  maxSessionExpirySeconds: number
}

/**
 * A client's MQTT 5 CONNECT as the 3.1.1 CONNECT aedes serves: any expiry above 0 is 3.1.1's
 * clean session 0 (persistent); the expiry itself is timed by the durable sessions, from the
 * connection's end (durable-sessions.ts).
 *
 * @example
 * brokerConnect({ cmd: 'connect', clientId: '', protocolVersion: 5 }, limits).connect.clientId // 'devicehub-…'
 */
export function brokerConnect (packet: IConnectPacket, server: ServerSide): { info: ConnectInfo, connect: IConnectPacket } {
  const properties = packet.properties ?? {}
  const requested = properties.sessionExpiryInterval ?? 0
  const expiry = Math.min(requested, server.maxSessionExpirySeconds)
  const assigned = packet.clientId === ''
  const clientId = assigned ? `devicehub-${randomUUID()}` : packet.clientId
  const limit = server.maxKeepAliveSeconds
  const keepalive = packet.keepalive ?? 0
  const serverKeepAlive = limit > 0 && (keepalive === 0 || keepalive > limit) ? limit : undefined
  const info: ConnectInfo = {
    clientId,
    assigned,
    persistent: expiry > 0,
    startsFresh: expiry > 0 && packet.clean !== false,
    resumesOnce: expiry === 0 && packet.clean === false,
    requestedExpiry: requested,
    grantedExpiry: expiry,
    serverKeepAlive,
    maxPacket: properties.maximumPacketSize ?? Infinity,
    receiveMaximum: properties.receiveMaximum ?? 65535
  }
  const connect: IConnectPacket = {
    cmd: 'connect',
    protocolId: 'MQTT',
    protocolVersion: 4,
    clientId,
    clean: expiry === 0,
    keepalive: serverKeepAlive ?? keepalive,
    // MQTT 5 allows a password without a username, 3.1.1 does not.
    ...(packet.username !== undefined || packet.password !== undefined ? { username: packet.username ?? '' } : {}),
    ...(packet.password === undefined ? {} : { password: packet.password })
  }
  return { info, connect }
}

/**
 * aedes' CONNACK as the client's: the reason code, and on success what the server supports; session
 * present as aedes wrote it (set for a session the store resumed: session-present.ts).
 *
 * @example
 * clientConnack({ cmd: 'connack', returnCode: 4, sessionPresent: false }, info, server) // reasonCode 0x86
 */
export function clientConnack (packet: IConnackPacket, info: ConnectInfo, server: ServerSide): IConnackPacket {
  const reasonCode = connackReason(packet.returnCode ?? 0)
  if (reasonCode !== REASON.success) return { cmd: 'connack', reasonCode, sessionPresent: false }
  return {
    cmd: 'connack',
    reasonCode,
    sessionPresent: packet.sessionPresent,
    properties: {
      // MQTT 5's maximum counts the fixed header (at most 5 bytes); the limit counts what follows it.
      maximumPacketSize: server.maxPacketBytes + 5,
      receiveMaximum: Math.max(1, Math.min(server.receiveMaximum, 65535)),
      topicAliasMaximum: 0,
      subscriptionIdentifiersAvailable: false,
      sharedSubscriptionAvailable: false,
      // Said only when the server keeps another interval than the one asked for (MQTT 5 §3.2.2.3.2).
      ...(info.grantedExpiry !== info.requestedExpiry ? { sessionExpiryInterval: info.grantedExpiry } : {}),
      ...(info.assigned ? { assignedClientIdentifier: info.clientId } : {}),
      ...(info.serverKeepAlive === undefined ? {} : { serverKeepAlive: info.serverKeepAlive })
    }
  }
}

/**
 * aedes' SUBACK as the client's: a reason code per topic filter of the SUBSCRIBE (`topics`).
 *
 * @example
 * clientSuback({ cmd: 'suback', messageId: 1, granted: [0, 128] }, ['dh/command/#', 'x/#'], 'c1') // granted [0, 0x8f]
 */
export function clientSuback (packet: ISubackPacket, topics: readonly string[], clientId: string): Packet {
  return {
    cmd: 'suback', messageId: packet.messageId,
    granted: packet.granted.map((code, i) => subackReason(Number(code), topics[i] ?? '', clientId))
  }
}

/** What becomes of a client packet: one for aedes, an answer to the client, or the connection's end. */
export type Inbound = { packet: Packet } | { answer: Packet } | { refused: number, reason: string }

const OUTSIDE_DH = 'Only DeviceHive topics (dh/...) are served'

/**
 * A client's MQTT 5 packet after its CONNECT, as aedes takes it (properties are not carried).
 * What 3.1.1 has no form of is refused: topic aliases, AUTH, a second CONNECT. A publish outside
 * `dh/`, which 3.1.1 can only refuse by closing the connection, is refused in its PUBACK / PUBREC.
 *
 * @example
 * brokerPacket({ cmd: 'pingreq' }) // { packet: { cmd: 'pingreq' } }
 */
export function brokerPacket (packet: Packet): Inbound {
  switch (packet.cmd) {
    case 'publish': {
      if (packet.properties?.topicAlias !== undefined) return {
        refused: REASON.topicAliasInvalid, reason: 'Topic aliases are not supported (topic alias maximum 0)'
      }
      if (!packet.topic.startsWith('dh/')) {
        if (packet.qos === 0) return { refused: REASON.notAuthorized, reason: OUTSIDE_DH }
        // No reason string: a client may have asked for none outside DISCONNECT (request problem information 0).
        return { answer: { cmd: packet.qos === 1 ? 'puback' : 'pubrec', messageId: packet.messageId, reasonCode: REASON.notAuthorized } }
      }
      const { topic, payload, qos, retain, dup, messageId } = packet
      return { packet: { cmd: 'publish', topic, payload, qos, retain, dup, ...(qos > 0 ? { messageId } : {}) } }
    }
    case 'subscribe':
      return { packet: {
        cmd: 'subscribe', messageId: packet.messageId, subscriptions: packet.subscriptions.map((s) => ({ topic: s.topic, qos: s.qos }))
      } }
    case 'unsubscribe':
      return { packet: { cmd: 'unsubscribe', messageId: packet.messageId, unsubscriptions: packet.unsubscriptions } }
    case 'puback':
    case 'pubrec':
    case 'pubrel':
    case 'pubcomp':
      return { packet: { cmd: packet.cmd, messageId: packet.messageId } }
    case 'pingreq':
    case 'disconnect':
      return { packet: { cmd: packet.cmd } }
    case 'auth':
      return { refused: REASON.protocolError, reason: 'Enhanced authentication (AUTH) is not supported' }
    default:
      return {
        refused: REASON.protocolError, reason: packet.cmd === 'connect' ? 'A second CONNECT' : `A client does not send ${packet.cmd}`
      }
  }
}

/**
 * aedes' packet (other than CONNACK and SUBACK) as the client's; `unsubscribed`: how many topic
 * filters the UNSUBSCRIBE an UNSUBACK answers had.
 *
 * @example
 * clientPacket({ cmd: 'puback', messageId: 7 }) // { cmd: 'puback', messageId: 7, reasonCode: 0 }
 */
export function clientPacket (packet: Packet, unsubscribed = 1): Packet {
  switch (packet.cmd) {
    case 'publish': {
      const { topic, payload, qos, dup, messageId } = packet
      return { cmd: 'publish', topic, payload, qos, retain: false, dup, messageId }
    }
    case 'unsuback':
      return { cmd: 'unsuback', messageId: packet.messageId, granted: new Array<number>(unsubscribed).fill(REASON.success) } as Packet
    case 'puback':
    case 'pubrec':
    case 'pubrel':
    case 'pubcomp':
      return { cmd: packet.cmd, messageId: packet.messageId, reasonCode: REASON.success }
    default:
      return packet
  }
}
