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
import type { Bus, BusEvent, LocalEvent, MessageEvent, MessageKind } from '../core/realtime/bus.js'
import { createListenerSet } from '../core/realtime/listener-set.js'

export const DEFAULT_HUB_CHANNEL = 'devicehub_events'

/** `application_name` of the LISTEN connection, so operators (and tests) find it in pg_stat_activity. */
export const DEFAULT_DOORBELL_APPLICATION_NAME = 'devicehub-doorbell'

/** Channel names are plain lower-case identifiers, so LISTEN and pg_notify agree on them. */
const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/

const MESSAGE_KINDS: ReadonlySet<string> = new Set<MessageKind>(['command', 'command-update', 'notification'])

/** `deviceId` prefix of a password-change `revoke` on the wire; the id of the token it spares follows (or nothing). */
const PASSWORD_CHANGE = 'password:'

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
   * Stops delivering the message events sent by these server processes (a store's connections,
   * `KyselyStore.sessions`), dropped before they are parsed: their writer orders them from its
   * statements' answers (postgres-ordering.ts). Plugin and revocation events are still delivered.
   * The set is read live; a later call replaces it.
   */
  ignoreWritesOf(sessions: ReadonlySet<number>): void
}


/**
 * Compact wire form: ids and routing keys, then the record when it fits. Control events keep the
 * six-element form of earlier versions (instances of two versions may share a database during an
 * upgrade): `plugin` as [kind, plugin id, '', null, null, topic], `revoke` as [kind, user id,
 * '' or `password:<kept token id>`, null, null, '' or a plugin's topic]. Device ids (48) and
 * names (128) are bounded by their columns, so a payload stays below PostgreSQL's 8000-byte NOTIFY
 * limit. Writes that ride the statement (pg-message-writes.ts) send ten elements: these six, the
 * record or null, and the draw chain (`prev`, `stamp`, `nextXid`); a statement of several rows
 * sends them packed (see `decodeDoorbellEvents`).
 */
export function encodeDoorbellEvent (event: Exclude<BusEvent, LocalEvent>): string {
  if (event.kind === 'plugin') return JSON.stringify([event.kind, event.pluginId, '', null, null, event.topic])
  if (event.kind === 'revoke') {
    const tokens = event.what === 'tokens' ? `${PASSWORD_CHANGE}${event.keptTokenId}` : ''
    return JSON.stringify([event.kind, event.userId, tokens, null, null, event.what === 'plugin' ? event.topic : ''])
  }
  const fields = [event.kind, event.id, event.deviceId, event.networkId, event.deviceTypeId, event.name]
  if (event.record === undefined) return JSON.stringify(fields)
  const withRecord = JSON.stringify([...fields, event.record])
  // NOTIFY payloads end at 8,000 bytes: a large record stays behind (listeners read the row).
  return Buffer.byteLength(withRecord) <= MAX_PAYLOAD ? withRecord : JSON.stringify(fields)
}

/** Largest payload sent with its record (PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more). */
const MAX_PAYLOAD = 7900

/**
 * The event a payload carries, or undefined for anything malformed. A packed payload reads as
 * its header alone: this is how instances of earlier versions (whose decoder this is) see it.
 *
 * @example
 * decodeDoorbellEvent('["notification",7,"dev-1",1,2,"temperature"]')?.kind // 'notification'
 */
export function decodeDoorbellEvent (payload: string): BusEvent | undefined {
  return decodeValue(parsePayload(payload))
}

/** Whether a payload is a message event's (every form starts with its kind), told without parsing it. */
function isMessagePayload (payload: string | undefined): boolean {
  return payload !== undefined && (payload.startsWith('["notification"') || payload.startsWith('["command'))
}

/** PostgreSQL refuses NOTIFY payloads of this many bytes or more: a longer one is not ours. */
const NOTIFY_LIMIT = 8000

/**
 * The JSON of a payload, or undefined when it is malformed or longer than any NOTIFY (checked
 * before parsing; within the limit, nesting is bounded too, and the decoders read two levels).
 */
function parsePayload (payload: string): unknown {
  if (payload.length >= NOTIFY_LIMIT) return undefined
  try {
    return JSON.parse(payload)
  } catch {
    return undefined
  }
}

/**
 * Every event a payload carries: one, or every row of a packed payload; none for anything
 * malformed.
 *
 * Packed form (one NOTIFY for a statement of several rows instead of one per row,
 * pg-message-writes.ts): `[kind, id, '', null, null, '', rows, stamp - 1, stamp, nextXid]`, ten
 * elements, where `rows` holds every row's event in the ten-element form, `id` is the largest of
 * their ids and `stamp` the last row's. The header's own chain names as `prev` the stamp just
 * before its `stamp`, which belongs to a row of the same statement that is never sent alone. An
 * instance of an earlier version drops the array (not a record) and waits for that link, which
 * never comes: its ordered bus finds the gap settled and resynchronises (reads the log up to a
 * fresh mark), so it misses nothing during a rolling upgrade; it only answers later
 * (docs/deployment.md).
 *
 * @example
 * for (const event of decodeDoorbellEvents(message.payload ?? '')) deliver(event)
 */
export function decodeDoorbellEvents (payload: string): BusEvent[] {
  const value = parsePayload(payload)
  const header = decodeValue(value)
  if (header === undefined) return []
  const pack = (value as unknown[])[6]
  if (!Array.isArray(pack) || !('order' in header) || header.order === undefined) return [header]
  const events: MessageEvent[] = []
  for (const row of pack) {
    const event = Array.isArray(row) && row.length === 10 && !Array.isArray(row[6]) ? decodeValue(row) : undefined
    if (event === undefined || !('order' in event) || event.order === undefined || event.kind !== header.kind) return []
    events.push(event)
  }
  // The header names the pack's last stamp: a pack that does not end there is not one of ours.
  return events.length > 1 && events.at(-1)!.order!.stamp === header.order.stamp ? events : []
}

function decodeValue (value: unknown): BusEvent | undefined {
  if (!Array.isArray(value) || (value.length !== 6 && value.length !== 7 && value.length !== 10)) return undefined
  const [kind, id, deviceId, networkId, deviceTypeId, name, record, prev, stamp, nextXid] = value as unknown[]
  const nullableId = (v: unknown): v is number | null => v === null || Number.isSafeInteger(v)
  if (typeof kind !== 'string' || !Number.isSafeInteger(id) || typeof deviceId !== 'string' ||
    !nullableId(networkId) || !nullableId(deviceTypeId) || typeof name !== 'string') return undefined
  if (kind === 'plugin' || kind === 'revoke') return value.length === 6 ? controlEvent(kind, id as number, deviceId, name) : undefined
  if (!MESSAGE_KINDS.has(kind)) return undefined
  const event: MessageEvent = { kind: kind as MessageKind, id: id as number, deviceId, networkId, deviceTypeId, name }
  // The record is written by devicehub's own statements (pg-message-writes.ts) in the record's
  // shape; one that does not name the same message is ignored (the listener reads the row).
  if (isRecordOf(event, record)) event.record = record
  if (value.length === 10) {
    // The draw chain of a statement-borne write (pg-message-writes.ts): required to order it.
    if (!Number.isSafeInteger(prev) || !Number.isSafeInteger(stamp) || !Number.isSafeInteger(nextXid)) return undefined
    event.order = { prev: prev as number, stamp: stamp as number, nextXid: nextXid as number }
  }
  return event
}

function controlEvent (kind: 'plugin' | 'revoke', id: number, deviceId: string, name: string): BusEvent {
  if (kind === 'plugin') return { kind, pluginId: id, topic: name }
  if (name !== '') return { kind, userId: id, what: 'plugin', topic: name }
  if (deviceId.startsWith(PASSWORD_CHANGE)) return { kind, userId: id, what: 'tokens', keptTokenId: deviceId.slice(PASSWORD_CHANGE.length) }
  return { kind, userId: id, what: 'rights' }
}

function isRecordOf (event: MessageEvent, record: unknown): record is NonNullable<MessageEvent['record']> {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return false
  const r = record as Record<string, unknown>
  const named = event.kind === 'notification' ? r.notification : r.command
  return r.id === event.id && r.deviceId === event.deviceId && named === event.name &&
    Number.isSafeInteger(r.timestamp) && Number.isSafeInteger(r.stamp)
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
    if (ignored.has(message.processId) && isMessagePayload(message.payload)) return
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
      if (tx.dialect === 'postgres') await tx.notify(channel, encodeDoorbellEvent(event))
      else tx.afterCommit(() => void notifyDirect(event))
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
