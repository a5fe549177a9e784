/**
 * The bus: how an event reaches every instance's listeners. Three members, none optional: publish,
 * subscribe, close. Message events carry ids and routing keys, and may carry the written record
 * as a hint (`record`) that saves every woken waiter's read; without it a waiter reads the store.
 * A lost event costs latency, never data: the message log stays the truth (backlogs and resyncs
 * read it). Ordering and marks belong to the log (message-log.ts), not to the bus.
 */
import type { CommandRecord, NotificationRecord } from './message-records.js'
import type { Store } from '../ports.js'
import type { DrawLink } from './store-ring.js'

export type { DrawLink } from './store-ring.js'

/** The kinds of message the log holds. */
export type MessageKind = 'command' | 'command-update' | 'notification'

/** A command insert, command update or notification insert, committed. */
export interface MessageEvent {
  kind: MessageKind
  /** Id of the command or notification. */
  id: number
  deviceId: string
  networkId: number | null
  deviceTypeId: number | null
  /** Command or notification name. */
  name: string
  /**
   * The record as written (a notification for `notification`, the command for `command` and
   * `command-update`), when the bus carries it: in-process always, over PostgreSQL NOTIFY when it
   * fits the payload. Listeners use it instead of reading the row by `id`.
   */
  record?: NotificationRecord | CommandRecord
  /**
   * Where the write stands in the stamp draw (PostgreSQL writes that ride the statement, whose
   * commits may land out of stamp order): the dialect's ordering of the log (log-ordering.ts)
   * orders such events before any listener sees them.
   */
  order?: DrawLink
}

/** Events may have been lost (a LISTEN connection came back, a gap in the draw chain): every reader reads the log again. */
export interface ResyncEvent {
  kind: 'resync'
}

/** A plugin's status or filter changed, or it was deleted. Message readers ignore it. */
export interface PluginEvent {
  kind: 'plugin'
  pluginId: number
  topic: string
}

/**
 * A user lost rights (`rights`: role lowered, status leaving ACTIVE, deletion, a network or device
 * type unassigned or deleted; `userId` 0, every user, is still understood), one plugin's reach
 * narrowed or it was deleted (`plugin`: only the waits of that plugin's tokens stop), or the
 * user's password changed (`tokens`: its tokens' waits stop but for `keptTokenId`, '' = none).
 * See `auth/revocations.ts`.
 */
export type RevokeEvent =
  | { kind: 'revoke', userId: number, what: 'rights' }
  | { kind: 'revoke', userId: number, what: 'plugin', topic: string }
  | { kind: 'revoke', userId: number, what: 'tokens', keptTokenId: string }

/**
 * The bus's own connection (PostgreSQL's LISTEN) went down (`up: false`) or came back (`up: true`,
 * followed by a `resync`). Local only, never sent to other instances: readiness (`/healthz`) reads
 * it. A bus without a connection of its own never publishes it.
 */
export interface ConnectionEvent {
  kind: 'connection'
  up: boolean
}

/**
 * A committed write changed rows that every request reads (users, assignments, networks, device
 * types, devices): each instance drops what its store keeps of earlier reads (`Store.forgetReads`).
 * The hub publishes it in every such write's transaction (`Store.watchOwnWrites`), so another
 * instance serves no row older than the write once it hears the commit. Message readers ignore it.
 */
export interface StaleReadsEvent {
  kind: 'stale-reads'
}

export type BusEvent = MessageEvent | ResyncEvent | PluginEvent | RevokeEvent | StaleReadsEvent | ConnectionEvent

/** Control events that only the bus itself raises, for this instance's listeners. */
export type LocalEvent = ResyncEvent | ConnectionEvent

/** Whether an event is a message write (not a control event). */
export function isMessageEvent (event: BusEvent): event is MessageEvent {
  return event.kind === 'notification' || event.kind === 'command' || event.kind === 'command-update'
}

export type BusListener = (event: BusEvent) => void

export interface Bus {
  /**
   * Publishes an event written in `tx`. Call it inside the write transaction: a bus that rides the
   * database (PostgreSQL NOTIFY) sends it there so it fires at commit; the memory bus delivers
   * after commit (`tx.afterCommit`). Without `tx` it is sent at once.
   */
  publish(event: BusEvent, tx?: Store): Promise<void>
  /**
   * Registers a listener; returns the function that removes it (idempotent). A bus should hand
   * the same event object to every listener: waiters woken by one event share one read keyed by
   * it (a distinct object per listener stays correct, only costs more reads). A listener that
   * throws must not stop delivery to the others.
   */
  subscribe(listener: BusListener): () => void
  close(): Promise<void>
}
