/**
 * The MQTT endpoint (issue #25): an aedes broker that speaks DeviceHive's MQTT protocol
 * (devicehive-mqtt) over the hub in this process. aedes parses packets, keeps keep-alives,
 * QoS handshakes and SUBACKs; everything DeviceHive goes through {@link MqttSession}: CONNECT
 * credentials are checked by the core, `dh/request` runs the WebSocket API's actions, topic
 * subscriptions are core subscriptions, and pushes go to one client directly. Nothing a client
 * publishes is fanned out by the broker, and only DeviceHive topics are served.
 */
import { createServer } from 'node:net'
import type { AddressInfo, Server, Socket } from 'node:net'
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { Aedes } from 'aedes'
import type { AuthenticateError, Client, PublishPacket, Subscription } from 'aedes'
import type { FastifyBaseLogger } from 'fastify'
import type { DeviceHub } from '../core/devicehub.js'
import { CONNACK, connectAuth, ownerOf } from './mqtt-auth.js'
import type { MqttLimits } from './mqtt-limits.js'
import { DEFAULT_MQTT_LIMITS } from './mqtt-limits.js'
import { MqttSession } from './mqtt-session.js'
import { REQUEST_TOPIC, parseTelemetryTopic, parseTopic } from './mqtt-topics.js'
import type { DurableBroker } from './durable-sessions.js'
import { createDurableSessions, wireDurableSessions } from './durable-sessions.js'
import { limitPacketSize } from './packet-limit.js'
import { grantAtMostDelivered } from './granted-qos.js'
import { createPauseCheck } from './client-pause.js'
import { announceSessionPresent } from './session-present.js'
import { readProtocolLevel } from './protocol-level.js'
import type { Mqtt5Connection } from './mqtt5-front-end.js'
import { createMqtt5FrontEnd } from './mqtt5-front-end.js'
import { REASON } from './mqtt5-reason-codes.js'
import { CLOSING } from './websocket-duplex.js'
import { initialisedWithin } from '../http/readiness-gate.js'

export interface MqttServerOptions {
  hub: DeviceHub
  logger: FastifyBaseLogger
  /** `server/info`'s `restServerUrl` (read when a session starts). */
  restServerUrl: () => string
  limits?: Partial<MqttLimits>
}

export interface MqttServer {
  /** Listens for MQTT over TCP; rejects (EADDRINUSE, ...) when it cannot. */
  listen(port: number, host?: string): Promise<AddressInfo>
  /**
   * Serves one connection made elsewhere (MQTT over WebSocket: a `createWebSocketStream`);
   * `address` is the client's as the HTTP layer sees it (Fastify's `request.ip`).
   */
  handle(stream: Duplex, request?: IncomingMessage, address?: string): void
  /** Where {@link listen} listens; undefined before. */
  readonly address: AddressInfo | undefined
  /** Connected (CONNACKed) clients. */
  readonly clients: number
  /** Core subscriptions over all sessions (Prometheus: devicehub_mqtt_subscriptions). */
  readonly subscriptions: number
  readonly limits: Readonly<MqttLimits>
  /** Disconnects every client and stops listening. Idempotent. */
  close(): Promise<void>
}

/** Where a client publish goes once handled: a `$` topic no filter matches, so no one gets it. */
const DISCARDED = '$devicehub/handled'

/** Logged when aedes' parser is not the one packet-limit.ts knows how to bound. */
const UNBOUNDED_PACKETS = 'mqtt: the packet size limit is not enforced (unexpected aedes parser)'

/**
 * Logged when a resumed session's CONNACK could not be told so: aedes, told every session is clean,
 * writes session present 0 (session-present.ts).
 */
const PRESENCE_UNSAID = 'mqtt: CONNACK session present not set (unexpected aedes writes)'

function refusal (returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode })
}

function clientIdTooLong (max: number): AuthenticateError {
  return refusal(CONNACK.identifierRejected, `Client id longer than ${max}`)
}

/** The client's address: the one the HTTP layer named (MQTT over WebSocket behind a trusted proxy), else the socket's. */
function addressOf (client: Client, named: WeakMap<object, string>): string | undefined {
  const conn = client.conn as Partial<Socket>
  return named.get(client.conn) ?? conn.remoteAddress ?? client.req?.socket?.remoteAddress
}

type Sessions = WeakMap<Client, MqttSession>

/** Every publish of a client: handled by its session (a request, telemetry), or refused. */
function authorizePublish (
  sessions: Sessions, client: Client | null, packet: PublishPacket, callback: (error?: Error | null) => void
): void {
  const session = client === null ? undefined : sessions.get(client)
  if (session === undefined) {
    callback(new Error('Not connected'))
    return
  }
  // Telemetry, the bulk of what devices publish, is told by its prefix and parsed once.
  const telemetry = parseTelemetryTopic(packet.topic)
  if (telemetry === undefined && parseTopic(packet.topic).kind === 'other') {
    callback(new Error('Only DeviceHive topics (dh/...) are served'))
    return
  }
  // No copy: the session reads the payload before this call returns.
  const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload
  if (telemetry !== undefined) session.telemetry(telemetry, payload)
  else if (packet.topic === REQUEST_TOPIC) session.request(payload)
  // Handled here (or ignored, as DeviceHive's broker ignores other dh/ publishes): never fanned out, never retained.
  packet.topic = DISCARDED
  packet.retain = false
  callback(null)
}

/** A topic filter is a response topic, a core subscription of this client's own, or refused (0x80). */
function authorizeSubscribe (
  sessions: Sessions, logger: FastifyBaseLogger, client: Client, subscription: Subscription,
  callback: (error: Error | null, subscription?: Subscription | null) => void
): void {
  const session = sessions.get(client)
  const parsed = parseTopic(subscription.topic, client.id)
  if (session === undefined || !session.hasRoomForTopic(subscription.topic)) {
    callback(null, null)
    return
  }
  if (parsed.kind === 'response') {
    session.subscribeResponse(subscription.topic)
    callback(null, { ...subscription, qos: 0 })
    return
  }
  if (parsed.kind !== 'event') {
    callback(null, null)
    return
  }
  session.subscribeTopic(subscription.topic, parsed.event, parsed.filter, subscription.qos).then((result) => {
    callback(null, 'granted' in result ? { ...subscription, qos: result.granted } : null)
  }, (error: unknown) => {
    logger.error({ err: error }, 'mqtt subscribe failed')
    callback(null, null)
  })
}

/** What aedes' parser lacks: a packet size bound, SUBACKs that grant what is delivered. */
function guardParser (client: Client, limits: MqttLimits, logger: FastifyBaseLogger): void {
  if (!limitPacketSize(client, limits.maxPacketBytes)) logger.warn(UNBOUNDED_PACKETS)
  if (!grantAtMostDelivered(client)) logger.warn('mqtt: SUBACKs grant the QoS asked for (unexpected aedes parser)')
}

/**
 * A client id may be taken over (MQTT-3.1.4-2) only by the same user, never by another; an
 * MQTT 5 client taken over is told (aedes closes it once the new CONNECT is accepted).
 */
function takesOverAnother (broker: Aedes, sessions: Sessions, mqtt5: Map<object, Mqtt5Connection>, client: Client, owner: string): boolean {
  const current = (broker as unknown as { clients: Record<string, Client | undefined> }).clients[client.id]
  if (current === undefined || current === client) return false
  const session = sessions.get(current)
  if (session !== undefined && session.owner !== owner) return true
  void mqtt5.get(current.conn)?.disconnect(REASON.sessionTakenOver, 'Another connection took the session over')
  return false
}

/**
 * Hands `stream` to `serve` once its CONNECT says which MQTT it speaks: as it is for 3.1 and
 * 3.1.1 (aedes' own), through an MQTT 5 front end (kept in `mqtt5` while open) for MQTT 5.
 */
function byProtocol (stream: Duplex, limits: MqttLimits, mqtt5: Map<object, Mqtt5Connection>, serve: (stream: Duplex) => void): void {
  readProtocolLevel(stream, limits.connectTimeoutMs, (level) => {
    if (level !== 5) {
      serve(stream)
      return
    }
    const front = createMqtt5FrontEnd(stream, {
      maxPacketBytes: limits.maxPacketBytes,
      maxKeepAliveSeconds: limits.maxKeepAliveSeconds,
      receiveMaximum: limits.maxInflightInbound,
      maxSessionExpirySeconds: limits.maxSessionExpirySeconds,
      maxHeldBytes: limits.maxBufferedBytes
    })
    mqtt5.set(front.inner, front)
    front.inner.once('close', () => mqtt5.delete(front.inner))
    // Over WebSocket, the shutdown closes the socket before this server's close() runs.
    stream.once(CLOSING, () => void front.disconnect(REASON.serverShuttingDown, 'Server shutting down'))
    serve(front.inner)
  })
}

/**
 * @example
 * const mqtt = await createMqttServer({ hub, logger: app.log, restServerUrl: () => 'http://127.0.0.1:8080/api/rest' })
 * await mqtt.listen(1883, '127.0.0.1')
 */
export async function createMqttServer (options: MqttServerOptions): Promise<MqttServer> {
  const { hub, logger } = options
  const limits: MqttLimits = { ...DEFAULT_MQTT_LIMITS, ...options.limits }
  const sessions: Sessions = new WeakMap()
  // Persistent sessions live in the store, not in aedes (durable-sessions.ts).
  const durable = createDurableSessions({ store: hub.store, logger, handoverWaitMs: limits.handoverWaitMs, leaseMs: limits.sessionLeaseMs })
  const connections = new Set<Duplex>()
  const addresses = new WeakMap<object, string>()
  /** MQTT 5 connections, by the stream aedes serves (mqtt5-front-end.ts). */
  const mqtt5 = new Map<object, Mqtt5Connection>()
  const live = new Set<MqttSession>()
  const checkPausable = createPauseCheck(logger)
  let lastSubscriptionId = 0
  const nextSubscriptionId = (): number => {
    lastSubscriptionId = Math.max(lastSubscriptionId + 1, Date.now() * 1000)
    return lastSubscriptionId
  }

  async function authenticate (client: Client, username: string | undefined, password: Buffer | undefined): Promise<MqttSession> {
    if (!await initialisedWithin(hub, limits.startupWaitMs)) throw refusal(CONNACK.serverUnavailable, 'The server is starting')
    if (client.id.length > limits.maxClientIdLength) throw clientIdTooLong(limits.maxClientIdLength)
    const auth = await connectAuth(hub, username, password, addressOf(client, addresses))
    if (auth.kind === 'refused') throw refusal(auth.returnCode, auth.message)
    const principal = auth.kind === 'authenticated' ? auth.principal : undefined
    if (takesOverAnother(broker, sessions, mqtt5, client, ownerOf(principal))) {
      throw refusal(CONNACK.identifierRejected, 'Client id in use by another user')
    }
    // aedes pauses a client during CONNECT: its internals are checked in the state the session finds them.
    checkPausable(client)
    const session = new MqttSession({
      hub, client, logger, limits, nextSubscriptionId,
      restServerUrl: options.restServerUrl(),
      clientAddress: addressOf(client, addresses),
      principal,
      token: auth.kind === 'authenticated' ? auth.token : undefined,
      sent: (message) => durable.sent(session, message),
      disconnect: (reasonCode, reason) => void mqtt5.get(client.conn)?.disconnect(reasonCode, reason),
      onRelease: (released) => live.delete(released)
    })
    live.add(session)
    sessions.set(client, session)
    client.conn.once('close', () => {
      session.release()
      durable.closed(session)
    })
    // Gone while the credentials were checked: aedes drops it, so must the session.
    if (client.closed) session.release()
    else if (await durable.open(session, client)) announceSessionPresent(client.conn, () => logger.warn(PRESENCE_UNSAID))
    // Gone while the session was opened: its close came before the session held anything.
    if (client.closed) durable.closed(session)
    return session
  }

  const broker = await Aedes.createBroker({
    connectTimeout: limits.connectTimeoutMs,
    drainTimeout: limits.drainTimeoutMs,
    maxInflightInbound: limits.maxInflightInbound,
    keepaliveLimit: limits.maxKeepAliveSeconds,
    maxClientsIdLength: limits.maxClientIdLength,
    preConnect (client, packet, done) {
      durable.preConnect(client, packet, mqtt5.get(client.conn)?.sessionRequest)
      done(null, true)
    },
    authenticate (client, username, password, done) {
      authenticate(client, username ?? undefined, password ?? undefined).then(() => done(null, true), (error: unknown) => {
        if (error instanceof Error && 'returnCode' in error) {
          logger.debug({ clientId: client.id, reason: error.message }, 'mqtt connect refused')
          done(error as AuthenticateError, false)
          return
        }
        logger.error({ err: error }, 'mqtt connect failed')
        done(refusal(CONNACK.serverUnavailable, 'Server unavailable'), false)
      })
    },
    authorizePublish: (client, packet, callback) => authorizePublish(sessions, client, packet, callback),
    authorizeSubscribe: (client, subscription, callback) => authorizeSubscribe(sessions, logger, client, subscription, callback),
    // A client's publish never reaches another client through the broker (see authorizePublish);
    // what the sessions publish to their own client carries no clientId.
    authorizeForward: (_client, packet) => packet.topic.startsWith('dh/') && 'clientId' in packet ? null : packet
  })
  broker.on('subscribe', (_subscriptions, client) => sessions.get(client)?.startSubscribed())
  // A persistent session's subscriptions are restored during CONNECT, with no SUBACK: they start after the CONNACK.
  broker.on('clientReady', (client) => sessions.get(client)?.startSubscribed())
  broker.on('unsubscribe', (topics, client) => {
    const session = sessions.get(client)
    for (const topic of topics) session?.unsubscribeTopic(topic)
  })
  wireDurableSessions(broker as unknown as DurableBroker, durable, (client: Client) => sessions.get(client))
  broker.on('clientDisconnect', (client) => sessions.get(client)?.release())
  // Told before aedes closes it (its 'error' path destroys the stream first).
  ;(broker as unknown as NodeJS.EventEmitter).on('keepaliveTimeout', (client: Client) => {
    void mqtt5.get(client.conn)?.disconnect(REASON.keepAliveTimeout, 'Keep alive timeout')
  })
  broker.on('clientError', (client, error) => logger.debug({ clientId: client.id, err: error }, 'mqtt client error'))
  broker.on('connectionError', (_client, error) => logger.debug({ err: error }, 'mqtt connection error'))
  // aedes emits 'error' on persistence failures: an unheard one would end the process.
  ;(broker as unknown as NodeJS.EventEmitter).on('error', (error: unknown) => logger.error({ err: error }, 'mqtt broker error'))

  let server: Server | undefined
  let address: AddressInfo | undefined
  let closing: Promise<void> | undefined

  function handle (stream: Duplex, request?: IncomingMessage, address?: string): void {
    if (closing !== undefined) {
      stream.destroy()
      return
    }
    connections.add(stream)
    stream.once('close', () => connections.delete(stream))
    const named = address ?? (stream as Partial<Socket>).remoteAddress
    byProtocol(stream, limits, mqtt5, (served) => {
      if (closing !== undefined) {
        stream.destroy()
        return
      }
      if (named !== undefined) addresses.set(served, named)
      guardParser(broker.handle(served, request), limits, logger)
    })
  }

  async function close (): Promise<void> {
    // MQTT 5 clients are told why (3.1.1 ones see the connection close).
    const farewells = [...mqtt5.values()].map((front) => front.disconnect(REASON.serverShuttingDown, 'Server shutting down'))
    await Promise.race([Promise.all(farewells), new Promise((resolve) => setTimeout(resolve, 500).unref())])
    await new Promise<void>((resolve) => broker.close(() => resolve()))
    for (const connection of connections) connection.destroy()
    // Acknowledgements already received are written before the store closes.
    await durable.close()
    if (server !== undefined) {
      const listening = server
      await new Promise<void>((resolve) => listening.close(() => resolve()))
    }
  }

  return {
    async listen (port, host) {
      const tcp = createServer((socket) => handle(socket))
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject)
        tcp.listen(port, host, () => {
          tcp.off('error', reject)
          resolve()
        })
      })
      tcp.on('error', (error) => logger.error({ err: error }, 'mqtt listener error'))
      server = tcp
      address = tcp.address() as AddressInfo
      return address
    },
    handle,
    get address () {
      return address
    },
    get clients () {
      return (broker as unknown as { connectedClients: number }).connectedClients
    },
    get subscriptions () {
      let total = 0
      for (const session of live) total += session.subscriptionCount
      return total
    },
    limits,
    async close () {
      closing ??= close()
      await closing
    }
  }
}
