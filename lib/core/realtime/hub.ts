/**
 * The hub seam: a doorbell, not a message bus. Events carry ids and routing keys, never whole
 * rows; a woken waiter reads the store again. Any hub is interchangeable and a lost doorbell
 * costs latency, never data.
 */
import type { Store } from '../ports.js'

/**
 * `resync` carries no item: the hub may have missed doorbells (e.g. a database hub lost and
 * re-established its connection), so every waiter must read the store again whatever it
 * waits for. Its `id` is 0, `deviceId` and `name` are '' and the routing ids are null.
 */
export type HubEventKind = 'command' | 'command-update' | 'notification' | 'resync'

export interface HubEvent {
  kind: HubEventKind
  /** Id of the command or notification. */
  id: number
  deviceId: string
  networkId: number | null
  deviceTypeId: number | null
  /** Command or notification name. */
  name: string
}

export type HubListener = (event: HubEvent) => void

export interface Hub {
  /**
   * Rings the doorbell for an item written in `tx`. Call it inside the write transaction: a
   * hub that rides the database (PostgreSQL NOTIFY) sends it there so it fires at commit; the
   * memory hub delivers after commit (`tx.afterCommit`). Without `tx` it rings at once.
   */
  publish(event: HubEvent, tx?: Store): Promise<void>
  /**
   * Registers a listener; returns the function that removes it (idempotent). A hub should hand
   * the same event object to every listener: waiters woken by one event share one read keyed by
   * it (a distinct object per listener stays correct, only costs more reads). A listener that
   * throws must not stop delivery to the others.
   */
  subscribe(listener: HubListener): () => void
  close(): Promise<void>
}
