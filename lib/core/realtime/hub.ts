/**
 * The hub seam: a doorbell, not a message bus. Events carry ids and routing keys, never whole
 * rows; a woken waiter reads the store again. Any hub is interchangeable and a lost doorbell
 * costs latency, never data. The messaging issue grows this interface.
 */
export type HubEventKind = 'command' | 'command-update' | 'notification'

export interface HubEvent {
  kind: HubEventKind
  /** Id of the command or notification. */
  id: number
  deviceId: string
  networkId: number
  deviceTypeId: number
  /** Command or notification name. */
  name: string
}

export type HubListener = (event: HubEvent) => void

export interface Hub {
  publish(event: HubEvent): void
  /** Registers a listener; returns the function that removes it. */
  subscribe(listener: HubListener): () => void
  close(): Promise<void>
}
