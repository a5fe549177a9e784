/**
 * The routing index between a doorbell and its waiters (long polls, and realtime subscriptions):
 * one doorbell listener per doorbell, and each event handed only to the listeners registered
 * for its device, network or device type, instead of to every parked waiter. A listener still
 * applies its own full rules (names, scope, cursor); the index only narrows who is asked.
 *
 * A `revoke` (a user's rights changed) goes to every listener, which checks whether it is its user.
 * A `resync` (the doorbell may have lost doorbells) goes to every listener, as a fresh event
 * object per resync, so that reads keyed by the event (shared-read.ts, the long poll's resync
 * read) are shared by the waiters of that one resync and never across two.
 */
import type { Doorbell, DoorbellEvent, DoorbellEventKind, DoorbellListener } from './doorbell.js'
import type { MessageScope } from './message-filter.js'

/** What a listener waits for. Omitted or `'all'` = any. */
export interface RoutingKeys {
  /** Event kinds (`resync` and `revoke` always reach every listener). */
  kinds: readonly Exclude<DoorbellEventKind, 'resync' | 'revoke'>[]
  deviceIds?: readonly string[]
  networkIds?: 'all' | readonly number[]
  deviceTypeIds?: 'all' | readonly number[]
}

export interface Dispatcher {
  /**
   * Registers `listener` for the events matching `keys` (by the most selective key: devices,
   * else networks, else device types, else every event of the kinds); returns the function
   * that removes it (idempotent).
   */
  register(keys: RoutingKeys, listener: DoorbellListener): () => void
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

type Bucket = Set<DoorbellListener>

class KindIndex {
  readonly byDevice = new Map<string, Bucket>()
  readonly byNetwork = new Map<number, Bucket>()
  readonly byDeviceType = new Map<number, Bucket>()
  readonly any: Bucket = new Set()
}

function add<K> (map: Map<K, Bucket>, key: K, listener: DoorbellListener): void {
  let bucket = map.get(key)
  if (bucket === undefined) map.set(key, bucket = new Set())
  bucket.add(listener)
}

function remove<K> (map: Map<K, Bucket>, key: K, listener: DoorbellListener): void {
  const bucket = map.get(key)
  if (bucket === undefined) return
  bucket.delete(listener)
  if (bucket.size === 0) map.delete(key)
}

const dispatchers = new WeakMap<Doorbell, Dispatcher>()

/**
 * The dispatcher of `doorbell` (one per doorbell, created on first use). It subscribes to the
 * doorbell while it has listeners and unsubscribes when the last one leaves.
 *
 * @example
 * const off = dispatcherFor(ctx.doorbell).register({ kinds: ['notification'], deviceIds: ['dev-1'] }, (event) => wake(event))
 * off()
 */
export function dispatcherFor (doorbell: Doorbell): Dispatcher {
  let dispatcher = dispatchers.get(doorbell)
  if (dispatcher === undefined) {
    dispatcher = createDispatcher(doorbell)
    dispatchers.set(doorbell, dispatcher)
  }
  return dispatcher
}

/**
 * Makes `wrapper` (a doorbell that forwards `subscribe` to `inner`, such as the counting one of
 * operations/hub-stats.ts) share the dispatcher of `inner`, so waiters registered through either
 * are one index and `dispatcherFor(hub.doorbell)` sees what the services registered.
 */
export function shareDispatcher (wrapper: Doorbell, inner: Doorbell): void {
  dispatchers.set(wrapper, dispatcherFor(inner))
}

/** A dispatcher over `doorbell`; prefer {@link dispatcherFor}, which shares one per doorbell. */
export function createDispatcher (doorbell: Doorbell): Dispatcher {
  const kinds = new Map<DoorbellEventKind, KindIndex>()
  const all = new Set<DoorbellListener>()
  let unsubscribe: (() => void) | undefined

  const call = (listener: DoorbellListener, event: DoorbellEvent): void => {
    try {
      listener(event)
    } catch {
      // A failing listener must not stop delivery to the others; waiters do not throw.
    }
  }

  const onEvent = (event: DoorbellEvent): void => {
    if (event.kind === 'resync') {
      const fresh = { ...event }
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
    // Each listener sits in exactly one bucket family, so it is reached at most once.
    const targets: DoorbellListener[] = [...(index.byDevice.get(event.deviceId) ?? []), ...index.any]
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
      unsubscribe ??= doorbell.subscribe(onEvent)
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
