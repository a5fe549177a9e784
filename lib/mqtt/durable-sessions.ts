/**
 * Durable sessions for sleepy devices (issue #25 point 4). A client that connects with
 * clean session 0 keeps its topic subscriptions across connections, and its QoS 1 command
 * subscriptions resume where the client last acknowledged: every command created while it was
 * away (and not expired) is delivered on reconnect, in order, until it is PUBACKed.
 *
 * What makes it work is the store (`store.mqttSessions`: subscriptions and, per subscription,
 * the cursor of the last acknowledged command), never the broker's memory: aedes is told every
 * session is clean (see mqtt-server.ts `preConnect`), so it keeps no subscription and no
 * outgoing message of its own. A restart, or a reconnect to another instance over the same
 * PostgreSQL database, resumes from the message log at the stored cursor, losslessly
 * (`hub.commands.subscribe` with `after`).
 *
 * Acknowledgements: MQTT 3.1.1 §4.6 has the receiver PUBACK QoS 1 messages in the order it
 * received them, and every QoS 1 message to one client is written in publish order, so the
 * acknowledged publish is the oldest unacknowledged one: a FIFO per connection, no message ids.
 * A cursor moves only when its command is acknowledged; one not acknowledged when the
 * connection ends is sent again on the next connection. Should the FIFO ever slip (a publish
 * counted that never reached the wire), a PUBACK is taken for an older publish: the cursor lags,
 * which resends, and never runs ahead, which would lose a command.
 *
 * Hand-over between instances: the cursors are written after the PUBACKs, so a device that
 * acknowledges on instance A and reconnects to instance B a few milliseconds later could be read
 * its previous cursor by B. A persistent session's connection therefore holds the session in the
 * store (`mqttSessions.hold`) until it has closed and its acknowledgements are written (the
 * release is chained after them); B waits, at most `handoverWaitMs`, for another instance's hold
 * to go before it reads the cursors. A hold left by a crashed instance, or by a connection A has
 * not yet seen die, only delays B's CONNACK by that bound (then QoS 1's at least once applies).
 *
 * Expiry (MQTT 5's session expiry interval): when the connection of a session with a finite
 * interval ends, the deadline is written on its subscriptions (after its acknowledgements), unless
 * another connection took the session over meanwhile (the hold is no longer this one's); the
 * next CONNECT drops a session found past it, as absent, and clears the deadline while connected.
 * An instance that dies writes no deadline, so while connected the session's hold carries its
 * interval and a lease (`leaseMs`, 60 s by default) that the instance renews for all its sessions
 * in one statement every third of it: a hold whose lease lapsed longer ago than the interval is
 * an expired session, as if its connection had ended when the lease ran out (it outlives its
 * interval by at most the lease). Expired sessions nobody reconnects are pruned now and then, on
 * a persistent CONNECT; a session that never expires (3.1.1, 0xFFFFFFFF) has no lease.
 */
import { randomBytes } from 'node:crypto'
import type { Principal } from '../core/auth/principal.js'
import type { Logger, Store } from '../core/ports.js'
import type { MqttSessionKey } from '../core/mqtt-sessions/mqtt-session-ports.js'
import type { EventFilter, EventTopic } from './mqtt-topics.js'
import { parseTopic } from './mqtt-topics.js'

/** What the durable layer needs of an MQTT session (mqtt-session.ts `MqttSession`). */
export interface DurableTarget {
  readonly clientId: string
  /** Who is behind the session: only users' sessions are durable (not anonymous clients', not plugins'). */
  readonly principal: Principal | undefined
  /** Opens an event topic's subscription (started after the CONNACK); `after` resumes commands from that cursor. */
  subscribeTopic(
    topic: string, event: EventTopic, filter: EventFilter, qos: number, after?: number
  ): Promise<{ granted: 0 | 1 } | { refused: string }>
  /** A response topic, `dh/response/<action>@<clientId>`, as subscribed. */
  subscribeResponse(topic: string): void
}

/** What the CONNECT asked for beyond 3.1.1's clean session (MQTT 5, mqtt5-front-end.ts). */
export interface SessionRequest {
  /** A persistent session that discards the stored one first (MQTT 5 clean start with a session expiry). */
  startsFresh?: boolean
  /**
   * MQTT 5 clean start 0 with no session expiry, which 3.1.1 calls clean: the stored session is
   * resumed (MQTT 5 §3.1.2.4) and ends with the connection (an expiry of 0).
   */
  resumesOnce?: boolean
  /** The session expiry interval in seconds; 0xFFFFFFFF or absent (3.1.1): never expires. */
  expirySeconds?: number
}

/** A QoS 1 publish written to the client; `topic` and `cursor` when it carries a durable command. */
export interface SentMessage {
  topic?: string
  cursor?: number
}

export interface DurableSessions {
  /**
   * aedes `preConnect`: keeps what the client asked for and tells aedes the session is clean, so
   * that aedes holds no session state of its own (no subscriptions, no outgoing messages to
   * resend: those would duplicate what the store resumes, and be lost on a restart).
   */
  preConnect(client: object, packet: { clean?: boolean }, request?: SessionRequest): void
  /**
   * After CONNECT authenticated the client, before the CONNACK: a clean session forgets what was
   * stored for (user, client id); a persistent one re-opens its stored subscriptions (their
   * streams start once the CONNACK is out). Resolves to whether a session was present.
   *
   * @example
   * const present = await durable.open(session, client)
   */
  open(session: DurableTarget, client: object): Promise<boolean>
  /** A SUBSCRIBE granted `topic`: kept for a persistent session. */
  subscribed(session: DurableTarget, topic: string, qos: number): void
  /** An UNSUBSCRIBE: forgotten for a persistent session. */
  unsubscribed(session: DurableTarget, topics: readonly string[]): void
  /** A QoS 1 publish was handed to the client, in order (call it for every one). */
  sent(session: DurableTarget, message: SentMessage): void
  /** A PUBACK came from the client: the oldest unacknowledged publish is acknowledged. */
  acked(session: DurableTarget): void
  /** The connection ended: what was not acknowledged stays where the stored cursor says. */
  closed(session: DurableTarget): void
  /** Stops renewing leases; resolves once every store write queued so far is done (shutdown, before the store closes). */
  close(): Promise<void>
}

interface SessionState {
  key: MqttSessionKey
  /** This connection's hold on the session (`<instance>:<n>`). */
  holder: string
  /** QoS 1 publishes not yet acknowledged, oldest first. */
  inFlight: SentMessage[]
  /** Which stored topics carry commands (the others are kept but never resumed). */
  topics: Set<string>
  /** How long the session outlives the connection, in ms; undefined: for good. */
  expiryMs: number | undefined
}

/** Resumable pushes: command inserts and command updates, both read by cursor from the message log. */
function resumes (event: EventTopic, qos: number): boolean {
  return qos >= 1 && (event === 'command' || event === 'command_update')
}

const keyText = (key: MqttSessionKey): string => `${key.userId}\u0000${key.clientId}`

/** How often a connection waiting for another instance's hold looks again. */
const HANDOVER_POLL_MS = 10

/** The session expiry interval that means never (MQTT 5 §3.1.2.11.2). */
const NEVER_EXPIRES = 0xffffffff

/** How often expired sessions nobody reconnects are deleted (at most, on a persistent CONNECT). */
const PRUNE_EVERY_MS = 10 * 60 * 1000

export interface DurableSessionsOptions {
  store: Store
  logger: Logger
  now?: () => number
  /** Longest wait for another instance's hold on a session before reading its cursors (default 2 s). */
  handoverWaitMs?: number
  /** How long a connected session's hold is vouched for without renewal, in ms (default 60 s; renewed every third of it). */
  leaseMs?: number
}

interface LeaseRenewal {
  /** The connected sessions with a finite expiry, whose holds' leases are renewed. */
  readonly leased: Set<object>
  /** No more renewals; resolves once the one running, if any, is done. */
  stop(): Promise<void>
}

/** Renews the leases of `instance`'s holds every third of `leaseMs`, in one statement, while it holds a leased session. */
function renewLeases (store: Store, logger: Logger, instance: string, leaseMs: number, now: () => number): LeaseRenewal {
  const leased = new Set<object>()
  let renewing: Promise<void> | undefined
  const timer = setInterval(() => {
    if (leased.size === 0 || renewing !== undefined) return
    renewing = store.mqttSessions.renewHolds(instance, now() + leaseMs).catch((error: unknown) => {
      logger.error({ err: error }, 'mqtt session: renewing leases failed')
    }).finally(() => {
      renewing = undefined
    })
  }, leaseMs / 3).unref()
  return {
    leased,
    async stop () {
      clearInterval(timer)
      await renewing
    }
  }
}

/**
 * @example
 * const durable = createDurableSessions({ store: hub.store, logger })
 */
export function createDurableSessions (options: DurableSessionsOptions): DurableSessions {
  const { store, logger } = options
  const now = options.now ?? Date.now
  const handoverWaitMs = options.handoverWaitMs ?? 2000
  // A lease of 0 or less would renew in a tight loop.
  const leaseMs = options.leaseMs !== undefined && options.leaseMs > 0 ? options.leaseMs : 60_000
  /** This instance's holds start with it: a hold of this instance needs no wait (writes are chained here). */
  const instance = randomBytes(8).toString('hex')
  let connections = 0
  const states = new WeakMap<DurableTarget, SessionState>()
  /** The session each connecting client asked for (aedes is always told "clean"). */
  const requested = new WeakMap<object, { asked: 'clean' | 'resume' | 'fresh', expiryMs: number | undefined }>()
  let prunedAt = -Infinity
  let pruning: Promise<void> = Promise.resolve()
  const leases = renewLeases(store, logger, instance, leaseMs, now)
  /**
   * Store writes per (user, client id), chained: a reconnect on this instance reads the cursor
   * only after the acknowledgements of the connection before it are written.
   */
  const writes = new Map<string, Promise<void>>()

  function write (key: MqttSessionKey, what: string, fn: () => Promise<void>): void {
    const id = keyText(key)
    const next = (writes.get(id) ?? Promise.resolve()).then(fn).catch((error: unknown) => {
      logger.error({ err: error, clientId: key.clientId }, `mqtt session: ${what} failed`)
    })
    writes.set(id, next)
    void next.then(() => {
      if (writes.get(id) === next) writes.delete(id)
    })
  }

  /** Waits until no other instance holds the session (or the bound passes). */
  async function handover (key: MqttSessionKey): Promise<void> {
    const until = Date.now() + handoverWaitMs
    for (;;) {
      const held = await store.mqttSessions.holderOf(key)
      if (held === undefined || held.holder.startsWith(`${instance}:`)) return
      if (Date.now() >= until) {
        logger.warn({ clientId: key.clientId, holder: held.holder }, 'mqtt session: still held by another instance, taken over')
        return
      }
      await new Promise((resolve) => setTimeout(resolve, HANDOVER_POLL_MS))
    }
  }

  /** Deletes the sessions expired by now, at most once per {@link PRUNE_EVERY_MS}; in the background. */
  function prune (): void {
    if (now() - prunedAt < PRUNE_EVERY_MS) return
    prunedAt = now()
    pruning = store.mqttSessions.dropExpired(now()).then(() => undefined, (error: unknown) => {
      logger.error({ err: error }, 'mqtt session: pruning expired sessions failed')
    })
  }

  /** A resumed session: dropped when found expired, else kept while connected. */
  async function unlessExpired (key: MqttSessionKey): Promise<void> {
    if (await store.mqttSessions.dropExpired(now(), key) > 0) logger.info({ clientId: key.clientId }, 'mqtt session: expired, not resumed')
    await store.mqttSessions.setExpiry(key, null)
  }

  async function restore (session: DurableTarget, state: SessionState): Promise<boolean> {
    const stored = await store.mqttSessions.list(state.key)
    for (const subscription of stored) {
      const parsed = parseTopic(subscription.topic, session.clientId)
      if (parsed.kind === 'response') {
        session.subscribeResponse(subscription.topic)
        continue
      }
      if (parsed.kind !== 'event') continue
      const after = resumes(parsed.event, subscription.qos) ? subscription.cursor ?? subscription.createdAt : undefined
      const result = await session.subscribeTopic(subscription.topic, parsed.event, parsed.filter, subscription.qos, after)
      if ('refused' in result) {
        // The user lost the rights to it since (or the device is gone): the subscription goes.
        logger.info(
          { clientId: state.key.clientId, topic: subscription.topic, reason: result.refused }, 'mqtt session: stored subscription dropped'
        )
        write(state.key, 'unsubscribe', () => store.mqttSessions.unsubscribe(state.key, subscription.topic))
      } else if (after !== undefined) {
        state.topics.add(subscription.topic)
      }
    }
    return stored.length > 0
  }

  return {
    preConnect (client, packet, request = {}) {
      const clean = packet.clean !== false && request.resumesOnce !== true
      const asked = clean ? 'clean' : request.startsFresh === true ? 'fresh' : 'resume'
      const seconds = request.expirySeconds ?? NEVER_EXPIRES
      requested.set(client, { asked, expiryMs: seconds >= NEVER_EXPIRES ? undefined : seconds * 1000 })
      packet.clean = true
    },

    async open (session, client) {
      const { asked, expiryMs } = requested.get(client) ?? { asked: 'clean', expiryMs: undefined }
      const principal = session.principal
      if (principal?.kind !== 'user') return false
      const userId = principal.user.id
      const key = { userId, clientId: session.clientId }
      await writes.get(keyText(key))
      if (asked === 'clean') {
        // [MQTT-3.1.2-6]: a clean session discards any previous one.
        await store.mqttSessions.clear(key)
        return false
      }
      await handover(key)
      prune()
      // MQTT 5: a clean start with a session expiry discards the previous session and keeps the new one.
      if (asked === 'fresh') await store.mqttSessions.clear(key)
      else await unlessExpired(key)
      const holder = `${instance}:${++connections}`
      await store.mqttSessions.hold(key, holder, now(), expiryMs === undefined ? undefined : { expiryMs, until: now() + leaseMs })
      const state: SessionState = { key, holder, inFlight: [], topics: new Set(), expiryMs }
      states.set(session, state)
      if (expiryMs !== undefined) leases.leased.add(state)
      return asked === 'fresh' ? false : restore(session, state)
    },

    subscribed (session, topic, qos) {
      const state = states.get(session)
      if (state === undefined) return
      const parsed = parseTopic(topic, session.clientId)
      if (parsed.kind === 'event' && resumes(parsed.event, qos)) state.topics.add(topic)
      else state.topics.delete(topic)
      const granted = parsed.kind === 'response' ? 0 : Math.min(qos, 1)
      write(state.key, 'subscribe', () => store.mqttSessions.subscribe(state.key, topic, granted, now()))
    },

    unsubscribed (session, topics) {
      const state = states.get(session)
      if (state === undefined) return
      for (const topic of topics) {
        state.topics.delete(topic)
        write(state.key, 'unsubscribe', () => store.mqttSessions.unsubscribe(state.key, topic))
      }
    },

    sent (session, message) {
      states.get(session)?.inFlight.push(message)
    },

    acked (session) {
      const state = states.get(session)
      const message = state?.inFlight.shift()
      if (state === undefined || message?.topic === undefined || message.cursor === undefined) return
      if (!state.topics.has(message.topic)) return
      const { topic, cursor } = message
      write(state.key, 'cursor', () => store.mqttSessions.advance(state.key, topic, cursor))
    },

    closed (session) {
      const state = states.get(session)
      if (state === undefined) return
      state.inFlight.length = 0
      states.delete(session)
      leases.leased.delete(state)
      const { expiryMs } = state
      // Unless another connection took the session over meanwhile: its deadline is its own.
      if (expiryMs !== undefined) write(state.key, 'expiry', () => store.mqttSessions.setExpiry(state.key, now() + expiryMs, state.holder))
      // After the acknowledgements already queued: then another instance may read the cursors.
      write(state.key, 'release', () => store.mqttSessions.release(state.key, state.holder))
    },

    async close () {
      await Promise.all([...writes.values(), pruning, leases.stop()])
    }
  }
}

/** What {@link wireDurableSessions} needs of the broker (an aedes instance). */
export interface DurableBroker {
  on(event: 'subscribe', listener: (subscriptions: Array<{ topic: string, qos: number }>, client: never) => void): unknown
  on(event: 'unsubscribe', listener: (topics: string[], client: never) => void): unknown
  on(event: 'ack', listener: (packet: unknown, client: never) => void): unknown
}

/**
 * Feeds the broker's events to the durable layer: granted subscriptions are kept, unsubscribed
 * ones forgotten, PUBACKs move cursors. (The restored subscriptions start on `clientReady`, once
 * the CONNACK is out: mqtt-server.ts.)
 *
 * @example
 * wireDurableSessions(broker, durable, (client) => sessions.get(client))
 */
export function wireDurableSessions<C> (
  broker: DurableBroker,
  durable: DurableSessions,
  sessionOf: (client: C) => DurableTarget | undefined
): void {
  broker.on('subscribe', (subscriptions, client: C) => {
    const session = sessionOf(client)
    if (session === undefined) return
    // 128: refused in the SUBACK.
    for (const { topic, qos } of subscriptions) if (qos !== 128) durable.subscribed(session, topic, qos)
  })
  broker.on('unsubscribe', (topics, client: C) => {
    const session = sessionOf(client)
    if (session !== undefined) durable.unsubscribed(session, topics)
  })
  broker.on('ack', (_packet, client: C) => {
    const session = sessionOf(client)
    if (session !== undefined) durable.acked(session)
  })
}
