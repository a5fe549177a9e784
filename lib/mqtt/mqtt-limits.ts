/**
 * The bounds of the MQTT endpoint, each with its default (docs/mqtt.md, "Limits"). A bound that
 * is crossed refuses the one packet or closes the one connection, never more.
 */

export interface MqttLimits {
  /** Largest MQTT packet (its remaining length), in bytes: a larger one closes the connection (default 1 MiB, as REST bodies). */
  maxPacketBytes: number
  /** Topic subscriptions one client may hold; one more is refused in the SUBACK (0x80) (default 1,000, as WebSocket). */
  maxSubscriptions: number
  /** Requests and telemetry publishes received and not yet handled: one more closes the connection (default 1,000). */
  maxPendingRequests: number
  /** Outbound bytes queued to a client that does not read: past it the client is cut off (default 512 KiB). */
  maxBufferedBytes: number
  /** How long a write may wait for a slow client to drain before it is cut off (aedes drainTimeout, default 10 s). */
  drainTimeoutMs: number
  /** An anonymous client that has not authenticated by then is disconnected (default 60 s, as WebSocket). */
  authTimeoutMs: number
  /** A connection that sends no CONNECT by then is closed (default 10 s). */
  connectTimeoutMs: number
  /** Inbound QoS 2 publishes awaiting PUBREL per client: one more closes it (aedes maxInflightInbound, default 100). */
  maxInflightInbound: number
  /** Largest keep-alive a CONNECT may ask for, in seconds; 0 = any, including none (aedes keepaliveLimit, default 0). */
  maxKeepAliveSeconds: number
  /** Longest client id (default 128 characters). */
  maxClientIdLength: number
  /** How long a CONNECT before the hub is initialised waits for it before CONNACK 3 (default 10 s). */
  startupWaitMs: number
  /**
   * How long a persistent session's CONNECT waits for the session's previous connection on
   * another instance to close and write its acknowledgements (default 2 s; durable-sessions.ts).
   */
  handoverWaitMs: number
  /**
   * Longest MQTT 5 session expiry interval kept, in seconds: a longer one is lowered to it and the
   * CONNACK says so (default 0xFFFFFFFF: any, including never).
   */
  maxSessionExpirySeconds: number
  /**
   * How long an instance vouches for the persistent sessions it serves without renewing (default
   * 60 s, renewed every third of it): a session with a finite expiry whose instance dies expires
   * at most this long after its interval (durable-sessions.ts).
   */
  sessionLeaseMs: number
}

export const DEFAULT_MQTT_LIMITS: Readonly<MqttLimits> = {
  maxPacketBytes: 1024 * 1024,
  maxSubscriptions: 1000,
  maxPendingRequests: 1000,
  maxBufferedBytes: 512 * 1024,
  drainTimeoutMs: 10_000,
  authTimeoutMs: 60_000,
  connectTimeoutMs: 10_000,
  maxInflightInbound: 100,
  maxKeepAliveSeconds: 0,
  maxClientIdLength: 128,
  startupWaitMs: 10_000,
  handoverWaitMs: 2000,
  maxSessionExpirySeconds: 0xffffffff,
  sessionLeaseMs: 60_000
}
