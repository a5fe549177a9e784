/**
 * The routing index between the bus and its waiters (long polls, realtime subscriptions): one bus
 * listener per hub, and each event handed only to the listeners registered for its device,
 * network or device type, instead of to every parked waiter. A listener still applies its own
 * full rules (names, scope, cursor); the index only narrows who is asked. The hub owns it.
 *
 * A `revoke` (a user's rights changed) goes to every listener, which checks whether it is its user.
 * A `resync` (events may have been lost) goes to every listener as one fresh {@link RoutedResync}
 * per resync, whose `reads` the streams it reaches share (one read per cursor scope), never across two.
 */
import type { Bus, BusEvent, MessageEvent, MessageKind, PluginEvent, RevokeEvent } from './bus.js'
import type { MessageScope } from './message-filter.js'

/** A resync as the router hands it on: one object per resync, with the reads its listeners share. */
export interface RoutedResync {
  kind: 'resync'
  /** Reads started for this resync, by what they read and after which cursor. */
  readonly reads: Map<string, Promise<unknown>>
  /** Checks of a subscriber's rights started for this resync, by principal (streams of one token share one). */
  readonly checks: WeakMap<object, Promise<boolean>>
}

export type RoutedEvent = MessageEvent | PluginEvent | RevokeEvent | RoutedResync
export type RoutedListener = (event: RoutedEvent) => void
type RoutedKind = MessageKind | 'plugin'

/** What a listener waits for. Omitted or `'all'` = any. */
export interface RoutingKeys {
  /** Event kinds (`resync` and `revoke` always reach every listener). */
  kinds: readonly RoutedKind[]
  deviceIds?: readonly string[]
  networkIds?: 'all' | readonly number[]
  deviceTypeIds?: 'all' | readonly number[]
}

export interface Router {
  /**
   * Registers `listener` for the events matching `keys` (by the most selective key: devices,
   * else networks, else device types, else every event of the kinds); returns the function
   * that removes it (idempotent).
   */
  register(keys: RoutingKeys, listener: RoutedListener): () => void
  /** Number of registered listeners (tests check nothing leaks). */
  readonly size: number
}

/**
 * The routing keys of a message selector (the same selector polls and subscriptions match with).
 *
 * @example
 * routingKeys(['notification'], { scope: principal.scope, deviceIds: ['dev-1'] })
 */
export function routingKeys (kinds: RoutingKeys['kinds'], selector: MessageScope): RoutingKeys {
  return { kinds, deviceIds: selector.deviceIds, networkIds: selector.scope.networkIds, deviceTypeIds: selector.scope.deviceTypeIds }
}

type Bucket = Set<RoutedListener>

class KindIndex {
  readonly byDevice = new Map<string, Bucket>()
  readonly byNetwork = new Map<number, Bucket>()
  readonly byDeviceType = new Map<number, Bucket>()
  readonly any: Bucket = new Set()
}

function add<K> (map: Map<K, Bucket>, key: K, listener: RoutedListener): void {
  let bucket = map.get(key)
  if (bucket === undefined) map.set(key, bucket = new Set())
  bucket.add(listener)
}

function remove<K> (map: Map<K, Bucket>, key: K, listener: RoutedListener): void {
  const bucket = map.get(key)
  if (bucket === undefined) return
  bucket.delete(listener)
  if (bucket.size === 0) map.delete(key)
}

/**
 * The router over `bus`: it subscribes while it has listeners and unsubscribes when the last leaves.
 *
 * @example
 * const off = router.register({ kinds: ['notification'], deviceIds: ['dev-1'] }, (event) => wake(event))
 * off()
 */
export function createRouter (bus: Bus): Router {
  const kinds = new Map<RoutedKind, KindIndex>()
  const all = new Set<RoutedListener>()
  let unsubscribe: (() => void) | undefined

  const call = (listener: RoutedListener, event: RoutedEvent): void => {
    try {
      listener(event)
    } catch {
      // A failing listener must not stop delivery to the others; waiters do not throw.
    }
  }

  const onEvent = (event: BusEvent): void => {
    // The bus's connection state is readiness's business, and stale reads the store's (the hub
    // drops its read cache), not a reader's.
    if (event.kind === 'connection' || event.kind === 'stale-reads') return
    if (event.kind === 'resync') {
      const fresh: RoutedResync = { kind: 'resync', reads: new Map(), checks: new WeakMap() }
      for (const listener of [...all]) call(listener, fresh)
      return
    }
    // A revocation names a user, not a device: every listener checks whether it is theirs.
    if (event.kind === 'revoke') {
      for (const listener of [...all]) call(listener, event)
      return
    }
    const index = kinds.get(event.kind)
    if (index === undefined) return
    if (event.kind === 'plugin') {
      for (const listener of [...index.any]) call(listener, event)
      return
    }
    // Each listener sits in exactly one bucket family, so it is reached at most once.
    const targets: RoutedListener[] = [...(index.byDevice.get(event.deviceId) ?? []), ...index.any]
    if (event.networkId !== null) targets.push(...(index.byNetwork.get(event.networkId) ?? []))
    if (event.deviceTypeId !== null) targets.push(...(index.byDeviceType.get(event.deviceTypeId) ?? []))
    for (const listener of targets) call(listener, event)
  }

  return {
    get size () {
      return all.size
    },
    register (keys, listener) {
      // A listener object may only be registered once at a time (it is its own identity).
      const entries: Array<() => void> = []
      for (const kind of keys.kinds) {
        let index = kinds.get(kind)
        if (index === undefined) kinds.set(kind, index = new KindIndex())
        const i = index
        if (keys.deviceIds !== undefined) {
          for (const id of keys.deviceIds) add(i.byDevice, id, listener)
          entries.push(() => { for (const id of keys.deviceIds!) remove(i.byDevice, id, listener) })
        } else if (keys.networkIds !== undefined && keys.networkIds !== 'all') {
          for (const id of keys.networkIds) add(i.byNetwork, id, listener)
          entries.push(() => { for (const id of keys.networkIds as readonly number[]) remove(i.byNetwork, id, listener) })
        } else if (keys.deviceTypeIds !== undefined && keys.deviceTypeIds !== 'all') {
          for (const id of keys.deviceTypeIds) add(i.byDeviceType, id, listener)
          entries.push(() => { for (const id of keys.deviceTypeIds as readonly number[]) remove(i.byDeviceType, id, listener) })
        } else {
          i.any.add(listener)
          entries.push(() => { i.any.delete(listener) })
        }
      }
      all.add(listener)
      unsubscribe ??= bus.subscribe(onEvent)
      let registered = true
      return () => {
        if (!registered) return
        registered = false
        for (const entry of entries) entry()
        all.delete(listener)
        if (all.size === 0 && unsubscribe !== undefined) {
          unsubscribe()
          unsubscribe = undefined
        }
      }
    }
  }
}
