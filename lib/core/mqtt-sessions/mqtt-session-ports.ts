/**
 * Durable MQTT sessions (issue #25 point 4): the subscriptions of a persistent session and,
 * per subscription, the cursor of the last command the client acknowledged. Kept in the store,
 * not in the broker's memory, so a sleepy device that reconnects after a restart, or to another
 * instance, resumes its commands from the message log where it left them.
 */

/** Whose session: a client id is only unique for one user (two users may both use `sensor-1`). */
export interface MqttSessionKey {
  userId: number
  clientId: string
}

/** One subscription of a persistent session. */
export interface MqttSubscriptionRecord {
  /** The topic filter as subscribed (`dh/command/+/+/led-1/#`). */
  topic: string
  qos: number
  /**
   * Server stamp (epoch ms) of the last command acknowledged on it: the resume point. Null
   * until the first acknowledgement; the subscription then resumes from `createdAt`.
   */
  cursor: number | null
  /** Epoch ms of the first subscription. */
  createdAt: number
}

/** A hold's lease: what expires a session whose instance died while it was connected. */
export interface SessionLease {
  /** The session expiry interval, in ms. */
  expiryMs: number
  /** Until when the instance vouches for the connection (epoch ms). */
  until: number
}

export interface MqttSessionRepository {
  /**
   * The subscriptions of a session, by topic.
   *
   * @example
   * const subscriptions = await store.mqttSessions.list({ userId: 7, clientId: 'led-1' })
   */
  list(key: MqttSessionKey): Promise<MqttSubscriptionRecord[]>
  /** Adds a subscription, or changes the QoS of one that exists (keeping its cursor). */
  subscribe(key: MqttSessionKey, topic: string, qos: number, now: number): Promise<void>
  /** Removes one subscription; nothing when there was none. */
  unsubscribe(key: MqttSessionKey, topic: string): Promise<void>
  /**
   * Moves the subscription's cursor to `cursor` if that is forward (never back: acknowledgements
   * of two connections may cross). Nothing when the subscription is gone.
   */
  advance(key: MqttSessionKey, topic: string, cursor: number): Promise<void>
  /** Forgets the session (a clean-session connect, or the session expired). */
  clear(key: MqttSessionKey): Promise<void>
  /**
   * When the session expires (epoch ms): set as its connection ends; null while connected and for
   * a session that never expires. Subscriptions added later start with null. With `holder`: only
   * while `holder` holds the session (a connection taken over leaves the new one's deadline be).
   */
  setExpiry(key: MqttSessionKey, expiresAt: number | null, holder?: string): Promise<void>
  /**
   * Deletes the subscriptions of sessions expired by `now` (of `key` only, when given): past their
   * `expiresAt`, or held with a lease that lapsed longer ago than their expiry interval (the
   * instance serving them died: {@link hold}), whose holds go too. Resolves to how many
   * subscriptions were deleted.
   *
   * @example
   * const expired = (await store.mqttSessions.dropExpired(Date.now(), key)) > 0
   */
  dropExpired(now: number, key?: MqttSessionKey): Promise<number>
  /**
   * The connection holding the session (connected, or closed with acknowledgements not yet
   * written), or undefined.
   */
  holderOf(key: MqttSessionKey): Promise<{ holder: string, since: number } | undefined>
  /**
   * `holder` holds the session from now on (whoever held it before). With `lease`: the session
   * expires `expiryMs` after `lease.until` unless the lease is renewed ({@link renewHolds}) or the
   * hold released first, so that it expires even if the instance holding it dies.
   */
  hold(key: MqttSessionKey, holder: string, now: number, lease?: SessionLease): Promise<void>
  /**
   * Renews the leases of every hold of `instance` (holders `<instance>:<connection>`) to `until`:
   * one statement for all the sessions an instance serves.
   */
  renewHolds(instance: string, until: number): Promise<void>
  /** `holder` lets the session go; nothing when another holder took it since. */
  release(key: MqttSessionKey, holder: string): Promise<void>
}
