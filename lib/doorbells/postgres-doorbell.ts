/**
 * The cross-instance bus on PostgreSQL: LISTEN/NOTIFY (`createPostgresDoorbell`, a name kept for the
 * public API). Each instance holds ONE dedicated LISTEN connection (a `pg.Client`, outside any pool).
 * Writers send `pg_notify` inside their write transaction (`tx.notify`), so the event fires exactly
 * at commit and never for a rolled-back row; every instance (the writer's included) hears it on its
 * LISTEN connection and wakes its local listeners. After a lost connection the bus reconnects with
 * exponential backoff and wakes every listener with a `resync` event, because events sent meanwhile
 * are gone.
 */
import type * as PgModule from 'pg'
import type { Client, Notification } from 'pg'
import type { Logger, Store } from '../core/ports.js'
import { silentLogger } from '../core/ports.js'
import type { Bus, BusEvent, LocalEvent } from '../core/realtime/bus.js'
import { createListenerSet } from '../core/realtime/listener-set.js'
import {
  decodeDoorbellEvents, encodeDoorbellEvent, isMessagePayload, isRevokePayload, isStaleReadsPayload
} from './postgres-doorbell-wire.js'

export { decodeDoorbellEvent, decodeDoorbellEvents, encodeDoorbellEvent } from './postgres-doorbell-wire.js'

export const DEFAULT_HUB_CHANNEL = 'devicehub_events'

/** `application_name` of the LISTEN connection, so operators (and tests) find it in pg_stat_activity. */
export const DEFAULT_DOORBELL_APPLICATION_NAME = 'devicehub-doorbell'

/** Channel names are plain lower-case identifiers, so LISTEN and pg_notify agree on them. */
const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface PostgresDoorbellOptions {
  /** NOTIFY channel shared by every instance of one deployment (default `devicehub_events`). */
  channel?: string
  logger?: Logger
  /** Reconnect backoff: first delay, doubled after each failure up to the maximum. */
  reconnect?: { initialDelayMs?: number, maxDelayMs?: number }
  /**
   * How often the LISTEN connection is probed with `select 1` (default 30 s; 0 = never). A
   * connection that only listens never writes, so a silently dropped network path would
   * otherwise go unnoticed until TCP keepalive gives up.
   */
  healthCheckIntervalMs?: number
  /** `application_name` of the LISTEN connection (default `devicehub-doorbell`). */
  applicationName?: string
}

export interface PostgresDoorbell extends Bus {
  /** The NOTIFY channel: writes on a PostgreSQL store send their events from the write statement (message-log.ts). */
  readonly notifyChannel: string
  /** Whether the LISTEN connection is up right now. */
  readonly connected: boolean
  /** Number of registered listeners. */
  readonly size: number
  /** Server process id of the LISTEN connection (for monitoring and tests), when connected. */
  readonly listenerPid: number | undefined
  /**
   * Stops delivering the message, revocation and stale-reads events sent by these server
   * processes (a store's connections, `KyselyStore.sessions`), dropped before they are parsed:
   * their writer orders the messages from its statements' answers (postgres-ordering.ts),
   * `publish` delivered the revocations at commit, and the store that wrote the rows dropped its
   * own reads. Plugin events are still delivered. The set is read live; a later call replaces it.
   */
  ignoreWritesOf(sessions: ReadonlySet<number>): void
}


/**
 * Connects and LISTENs before it resolves; a failing first connection rejects (a wrong URL
 * should stop the start, not retry forever). Later losses reconnect in the background.
 *
 * @example
 * const bus = await createPostgresDoorbell('postgres://devicehub@db:5432/devicehub')
 * const off = bus.subscribe((event) => console.log(event.kind))
 * await store.transaction(async (tx) => {
 *   const row = await tx.notifications.insert(input)
 *   await bus.publish({
 *     kind: 'notification', id: row.id, deviceId: row.deviceId, networkId: row.networkId, deviceTypeId: row.deviceTypeId,
 *     name: row.notification
 *   }, tx)
 * })
 * off()
 * await bus.close()
 */
export async function createPostgresDoorbell (url: string, options: PostgresDoorbellOptions = {}): Promise<PostgresDoorbell> {
  const channel = options.channel ?? DEFAULT_HUB_CHANNEL
  if (!CHANNEL_NAME.test(channel)) throw new Error(`Invalid doorbell channel '${channel}': use lower-case letters, digits and '_'`)
  const logger = options.logger ?? silentLogger
  const applicationName = options.applicationName ?? DEFAULT_DOORBELL_APPLICATION_NAME
  const initialDelay = options.reconnect?.initialDelayMs ?? 250
  const maxDelay = Math.max(initialDelay, options.reconnect?.maxDelayMs ?? 30_000)
  const { default: pg } = await loadPg()

  const listeners = createListenerSet((error) => { logger.error({ err: error }, 'doorbell listener failed') })
  let client: Client | undefined
  let closed = false
  let timer: NodeJS.Timeout | undefined
  let delay = initialDelay
  const healthInterval = options.healthCheckIntervalMs ?? 30_000
  let healthTimer: NodeJS.Timeout | undefined
  let ignored: ReadonlySet<number> = new Set()

  const deliver = (event: BusEvent): void => {
    listeners.deliver(event)
  }

  const onNotification = (message: Notification): void => {
    if (message.channel !== channel) return
    // This instance's own writes reached it already: messages from their statements' answers, a
    // revocation at commit, stale reads through the store that wrote them.
    if (ignored.has(message.processId) && (isMessagePayload(message.payload) || isRevokePayload(message.payload) ||
      isStaleReadsPayload(message.payload))) return
    const events = decodeDoorbellEvents(message.payload ?? '')
    if (events.length === 0) {
      logger.warn({ channel, payload: message.payload?.slice(0, 200) }, 'doorbell ignored a malformed notification')
      return
    }
    for (const event of events) deliver(event)
  }

  const connect = async (): Promise<void> => {
    const candidate = new pg.Client({
      connectionString: url, application_name: applicationName, keepAlive: true, keepAliveInitialDelayMillis: 10_000
    })
    candidate.on('notification', onNotification)
    candidate.on('error', (error) => lost(candidate, error))
    candidate.on('end', () => lost(candidate, undefined))
    try {
      await candidate.connect()
      await candidate.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
    } catch (error) {
      candidate.removeAllListeners('end')
      candidate.on('error', () => {})
      await candidate.end().catch(() => {})
      throw error
    }
    if (closed) {
      await candidate.end().catch(() => {})
      return
    }
    client = candidate
  }

  function lost (which: Client, error: unknown): void {
    if (client !== which) return
    client = undefined
    which.removeAllListeners('end')
    which.on('error', () => {})
    which.end().catch(() => {})
    if (closed) return
    logger.warn({ err: error, channel }, 'doorbell lost its LISTEN connection; reconnecting')
    deliver({ kind: 'connection', up: false })
    scheduleReconnect()
  }

  function scheduleReconnect (): void {
    if (closed || timer !== undefined) return
    timer = setTimeout(() => {
      timer = undefined
      connect().then(() => {
        if (closed) return
        delay = initialDelay
        logger.info({ channel }, 'doorbell reconnected; waking every listener to read again')
        deliver({ kind: 'connection', up: true })
        deliver({ kind: 'resync' })
      }, (error: unknown) => {
        delay = Math.min(delay * 2, maxDelay)
        logger.warn({ err: error, channel, retryInMs: delay }, 'doorbell reconnect failed')
        scheduleReconnect()
      })
    }, delay)
  }

  /** NOTIFY on the bus's own connection; when that is down, at least local listeners hear it. */
  const notifyDirect = async (event: Exclude<BusEvent, LocalEvent>): Promise<void> => {
    const current = client
    if (current !== undefined) {
      try {
        await current.query('select pg_notify($1, $2)', [channel, encodeDoorbellEvent(event)])
        return
      } catch (error) {
        logger.warn({ err: error, channel }, 'doorbell could not send a notification; delivering locally')
      }
    }
    deliver(event)
  }

  /** A probe that fails or outlives the interval counts as a lost connection. */
  const checkHealth = (): void => {
    const current = client
    if (current === undefined) return
    let timeout: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_resolve, reject) => {
      timeout = setTimeout(() => reject(new Error('LISTEN connection health check timed out')), healthInterval)
    })
    Promise.race([current.query('select 1'), expired]).then(() => {}, (error: unknown) => lost(current, error))
      .finally(() => clearTimeout(timeout))
  }

  await connect()
  if (healthInterval > 0) healthTimer = setInterval(checkHealth, healthInterval)

  return {
    get connected () {
      return client !== undefined
    },
    get size () {
      return listeners.size
    },
    get listenerPid () {
      return (client as (Client & { processID?: number | null }) | undefined)?.processID ?? undefined
    },
    notifyChannel: channel,
    ignoreWritesOf (sessions) {
      ignored = sessions
    },
    async publish (event: BusEvent, tx?: Store) {
      if (event.kind === 'resync' || event.kind === 'connection') {
        deliver(event)
        return
      }
      if (tx === undefined) return notifyDirect(event)
      // On a PostgreSQL store the NOTIFY rides the write transaction and fires at commit; on
      // any other store it is sent from the bus's connection once the write has committed.
      if (tx.dialect === 'postgres') {
        await tx.notify(channel, encodeDoorbellEvent(event))
        // A revocation takes effect here at commit, before the change is answered, not when its
        // NOTIFY comes back: this instance's own writes reach its waits from their statements'
        // answers, so a message the caller wrote next could reach a wait the change revoked first
        // (a locked user's parked poll answered it, once in CI). Its NOTIFY is then dropped
        // (`ignoreWritesOf`); other instances hear it as before.
        if (event.kind === 'revoke') tx.afterCommit(() => deliver(event))
      } else {
        tx.afterCommit(() => void notifyDirect(event))
      }
    },
    subscribe (listener) {
      return listeners.add(listener)
    },
    async close () {
      closed = true
      if (healthTimer !== undefined) clearInterval(healthTimer)
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      listeners.clear()
      const current = client
      client = undefined
      if (current !== undefined) {
        current.removeAllListeners('end')
        current.on('error', () => {})
        await current.end().catch(() => {})
      }
    }
  }
}

async function loadPg (): Promise<typeof PgModule> {
  try {
    return await import('pg')
  } catch (error) {
    throw new Error("The PostgreSQL doorbell needs the 'pg' package: npm install pg", { cause: error })
  }
}
