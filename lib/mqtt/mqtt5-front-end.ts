/**
 * MQTT 5 clients on a 3.1.1 broker (issue #25: aedes 1.2 speaks 3.1 and 3.1.1 only). One front
 * end per MQTT 5 connection sits between the client's stream and aedes: it parses the client's
 * MQTT 5 packets and hands aedes their 3.1.1 form through a stream of its own (`inner`); what
 * aedes writes there is parsed back and sent to the client as MQTT 5, with reason codes where
 * 3.1.1 has return codes or nothing (CONNACK, SUBACK, UNSUBACK) and a DISCONNECT with a reason
 * where the server ends a connection. Every DeviceHive topic and action is then served exactly as
 * for 3.1.1, by the same code.
 *
 * MQTT 5 features with no 3.1.1 form are refused or announced as absent in the CONNACK: topic
 * aliases (maximum 0), subscription identifiers, shared subscriptions, enhanced authentication
 * (AUTH); properties of PUBLISH and SUBSCRIBE are not carried.
 */
import { Duplex } from 'node:stream'
import mqttPacket from 'mqtt-packet'
import type { IConnectPacket, Packet } from 'mqtt-packet'
import { PacketTooLargeError, limitParser } from './packet-limit.js'
import type { PacketParser } from './packet-limit.js'
import { REASON } from './mqtt5-reason-codes.js'
import type { ConnectInfo, ServerSide } from './mqtt5-packets.js'
import type { SessionRequest } from './durable-sessions.js'
import { brokerConnect, brokerPacket, clientConnack, clientPacket, clientSuback } from './mqtt5-packets.js'
import type { ReceiveWindow } from './receive-window.js'
import { createAnswerWait, createInboundWindow, createReceiveWindow } from './receive-window.js'

/** The limits the front end keeps and announces (MqttLimits). */
export interface Mqtt5FrontEndOptions extends ServerSide {
  /** Publishes held past the client's receive maximum, in bytes, at most (MqttLimits.maxBufferedBytes). */
  maxHeldBytes: number
}

export interface Mqtt5Connection {
  /** What aedes serves: a 3.1.1 client. */
  readonly inner: Duplex
  /**
   * The session the CONNECT asked for beyond 3.1.1's clean session 0: a clean start with a session
   * expiry (the stored session is discarded, the new one persists), no clean start and no expiry
   * (the stored session is resumed, and ends with the connection), the expiry interval kept.
   */
  readonly sessionRequest: SessionRequest
  /** Sends DISCONNECT with `reasonCode` (once; none after a refused CONNECT); resolves once written. */
  disconnect(reasonCode: number, reason?: string): Promise<void>
}

/** How long a closing connection has to flush its last packet before it is destroyed. */
const LINGER_MS = 1000

/** Writes to `outer` where packets written in one turn leave together (as mqtt-packet's writeToStream does): no TCP segment per PUBACK. */
function corkedWriter (outer: Duplex): (bytes: Buffer, callback?: () => void) => boolean {
  let corked = false
  return (bytes, callback) => {
    if (outer.destroyed || outer.writableEnded) {
      callback?.()
      return true
    }
    if (!corked) {
      corked = true
      outer.cork()
      process.nextTick(() => {
        corked = false
        outer.uncork()
      })
    }
    return outer.write(bytes, () => callback?.())
  }
}

/** What the CONNECT asked of the durable layer (none before the CONNECT). */
function sessionRequestOf (connect: ConnectInfo | undefined): SessionRequest {
  const expirySeconds = connect?.grantedExpiry ?? 0
  return { startsFresh: connect?.startsFresh === true, resumesOnce: connect?.resumesOnce === true, expirySeconds }
}

/**
 * @example
 * const front = createMqtt5FrontEnd(socket, {
 *   maxPacketBytes: 1 << 20, maxKeepAliveSeconds: 0, receiveMaximum: 100, maxSessionExpirySeconds: 0xffffffff, maxHeldBytes: 1 << 19
 * })
 * broker.handle(front.inner)
 */
export function createMqtt5FrontEnd (outer: Duplex, options: Mqtt5FrontEndOptions): Mqtt5Connection {
  const inbound = mqttPacket.parser()
  const outbound = mqttPacket.parser()
  limitParser(inbound as unknown as PacketParser, options.maxPacketBytes)
  let connect: ConnectInfo | undefined
  /** The client's receive maximum over the server's QoS 1 publishes (receive-window.ts). */
  let window: ReceiveWindow | undefined
  let connected = false
  let ending = false
  let paused = false
  /** Topic filters of SUBSCRIBEs and counts of UNSUBSCRIBEs awaiting their acknowledgement, by packet id. */
  const subscribes = new Map<number, string[]>()
  const unsubscribes = new Map<number, number>()
  const inbound2 = createInboundWindow(options.receiveMaximum)

  const write = corkedWriter(outer)
  const send = (packet: Packet, callback?: () => void): boolean => write(mqttPacket.generate(packet, { protocolVersion: 5 }), callback)
  /** The 0x93 DISCONNECT waits for aedes' answers to the publishes handed to it before. */
  const answers = createAnswerWait(LINGER_MS, (reasonCode, reason) => void fail(reasonCode, reason))

  /** Ends the connection: the last packet written flushes, then the stream goes (at the latest after LINGER_MS). */
  const end = (): void => {
    if (!outer.writableEnded) outer.end()
    setTimeout(() => outer.destroy(), LINGER_MS).unref()
    if (!inner.destroyed) inner.destroy()
  }

  const fail = (reasonCode: number, reason: string): Promise<void> => {
    if (ending) return Promise.resolve()
    ending = true
    const written = new Promise<void>((resolve) => {
      if (connected) send({ cmd: 'disconnect', reasonCode, properties: { reasonString: reason } }, resolve)
      else if (connect !== undefined) send({ cmd: 'connack', reasonCode, sessionPresent: false }, resolve)
      else resolve()
    })
    end()
    return written
  }

  const toBroker = (packet: Packet): void => {
    if (packet.cmd === 'publish' && packet.qos > 0) answers.handed(packet.messageId ?? 0)
    if (!inner.push(mqttPacket.generate(packet))) paused = true
  }

  const inner = new Duplex({
    read () {
      if (!paused) return
      paused = false
      pump()
    },
    write (chunk: Buffer, _encoding, callback) {
      try {
        outbound.parse(chunk)
      } catch {
        void fail(REASON.implementationSpecificError, 'Internal error')
      }
      if (outer.writableNeedDrain && !outer.destroyed) outer.once('drain', () => callback())
      else callback()
    },
    final (callback) {
      end()
      callback()
    },
    destroy (error, callback) {
      // aedes closes the client: the packets it wrote last (a refused CONNACK) still reach it.
      if (!outer.destroyed && !outer.writableEnded) {
        outer.end()
        setTimeout(() => outer.destroy(), LINGER_MS).unref()
      }
      callback(error)
    }
  })

  function onConnect (packet: IConnectPacket): void {
    const translated = brokerConnect(packet, options)
    connect = translated.info
    window = createReceiveWindow({
      limit: connect.receiveMaximum,
      maxHeldBytes: options.maxHeldBytes,
      send: (bytes) => write(bytes),
      onOverflow: () => void fail(REASON.quotaExceeded, 'Too many publishes awaiting acknowledgement')
    })
    if (packet.properties?.authenticationMethod !== undefined) {
      void fail(REASON.badAuthenticationMethod,
        'Enhanced authentication is not supported: a username and password, or an access token as the password')
      return
    }
    toBroker(translated.connect)
  }

  /** One client packet, in its 3.1.1 form for aedes. */
  function fromClient (packet: Packet): void {
    if (ending || answers.refusing) return
    if (connect === undefined) {
      if (packet.cmd === 'connect') onConnect(packet)
      else void fail(REASON.protocolError, 'The first packet is a CONNECT')
      return
    }
    if (packet.cmd === 'subscribe') subscribes.set(packet.messageId ?? 0, packet.subscriptions.map((s) => s.topic))
    if (packet.cmd === 'unsubscribe') unsubscribes.set(packet.messageId ?? 0, packet.unsubscriptions.length)
    if (packet.cmd === 'puback') window?.acknowledged(packet.messageId)
    if (!inbound2.received(packet)) {
      return answers.refuse(REASON.receiveMaximumExceeded, 'More QoS 2 publishes awaiting PUBREL than the receive maximum')
    }
    const result = brokerPacket(packet)
    if ('refused' in result) void fail(result.refused, result.reason)
    else if ('answer' in result) send(result.answer)
    else toBroker(result.packet)
  }

  /** One aedes packet, in its MQTT 5 form for the client. */
  function toClient (packet: Packet): void {
    if (ending || connect === undefined) return
    const id = packet.messageId ?? 0
    if (packet.cmd === 'connack') {
      const answer = clientConnack(packet, connect, options)
      connected = answer.reasonCode === REASON.success
      send(answer)
    } else if (packet.cmd === 'suback') {
      send(clientSuback(packet, subscribes.get(id) ?? [], connect.clientId))
      subscribes.delete(id)
    } else if (packet.cmd === 'publish') {
      const bytes = mqttPacket.generate(clientPacket(packet), { protocolVersion: 5 })
      // Larger than the client takes: not sent (MQTT 5 §3.1.2.11.4), as if delivered.
      if (bytes.length <= connect.maxPacket) window?.publish(packet.qos, packet.messageId, bytes)
    } else {
      send(clientPacket(packet, unsubscribes.get(id)))
      if (packet.cmd === 'unsuback') unsubscribes.delete(id)
      if (packet.cmd === 'puback' || packet.cmd === 'pubrec') answers.answered(id)
    }
  }

  function pump (): void {
    let chunk: Buffer | null
    while (!paused && !ending && (chunk = outer.read() as Buffer | null) !== null) {
      try {
        inbound.parse(chunk)
      } catch {
        // mqtt-packet throws on some malformed input instead of emitting 'error'.
        void fail(REASON.malformedPacket, 'Packet could not be read')
      }
    }
  }

  inbound.on('packet', (packet: Packet) => {
    try {
      fromClient(packet)
    } catch {
      void fail(REASON.malformedPacket, 'Packet could not be read')
    }
  })
  inbound.on('error', (error: Error) => {
    void fail(error instanceof PacketTooLargeError ? REASON.packetTooLarge : REASON.malformedPacket, error.message)
  })
  outbound.on('packet', (packet: Packet) => toClient(packet))
  outbound.on('error', () => void fail(REASON.implementationSpecificError, 'Internal error'))
  outer.on('readable', pump)
  outer.on('end', () => inner.push(null))
  outer.on('close', () => inner.destroy())
  // A socket error (a client gone) is the connection's end, never the process's.
  outer.on('error', () => outer.destroy())

  return {
    inner,
    get sessionRequest () {
      return sessionRequestOf(connect)
    },
    disconnect: fail
  }
}
