/**
 * The long-poll waiter (spec §7.3): subscribe first, then read the backlog; if it is empty,
 * wait for the first matching doorbell, the timeout, the client going away or shutdown. No
 * store connection is held while waiting, and every exit removes the listener and the timer.
 */
import type { HighWater } from '../commands/command-ports.js'
import type { Cancellation, WaiterRegistry } from './cancellation.js'
import type { Doorbell, DoorbellEvent } from './doorbell.js'
import type { RoutingKeys } from './dispatcher.js'
import { dispatcherFor } from './dispatcher.js'

export interface LongPollSpec<T> {
  doorbell: Doorbell
  /** Seconds to wait when the backlog is empty (0 = answer at once). */
  waitSeconds: number
  /** Ends the wait early with `[]` (the client went away). */
  signal?: Cancellation
  /** Releases the wait at shutdown. */
  waiters?: WaiterRegistry
  /**
   * Where the waiter registers in the doorbell's routing index (dispatcher.ts), so that only
   * events for its devices / networks / device types reach it. Absent = every event.
   */
  readonly keys?: RoutingKeys
  /**
   * Whether a `revoke` doorbell concerns the caller (`auth/revocations.ts` `revokes`): the wait
   * then ends with `[]`, so the client's next poll is authenticated under its new rights.
   */
  revokedBy?(event: DoorbellEvent): boolean
  /** Cheap check on the doorbell's routing keys, before any read. */
  routes(event: DoorbellEvent): boolean
  highWater(): Promise<HighWater>
  /**
   * The backlog, given where the store stood at subscribe time; `null` = answer `[]` now, no
   * wait. Called again on a `resync`, so it must read from the same cursor each time.
   */
  backlog(mark: HighWater): Promise<T[] | null>
  /** The item a doorbell names (shared between waiters); undefined when gone. */
  load(event: DoorbellEvent): Promise<T | undefined>
  /** Full check of a live item: filters, scope, and that it is new for this waiter. */
  accepts(item: T, mark: HighWater): boolean
  /**
   * Identifies this waiter's backlog read (selector, cursor, limit), asked after the first read:
   * on a `resync`, waiters with equal keys share one re-read instead of one each. Absent = own read.
   */
  resyncKey?(): string
}

const ALL_KINDS: RoutingKeys = { kinds: ['command', 'command-update', 'notification'] }

/** The re-reads of one resync event, by resync key. */
const resyncReads = new WeakMap<DoorbellEvent, Map<string, Promise<unknown>>>()

function sharedResyncRead<T> (event: DoorbellEvent, key: string, read: () => Promise<T>): Promise<T> {
  let reads = resyncReads.get(event)
  if (reads === undefined) resyncReads.set(event, reads = new Map())
  let promise = reads.get(key) as Promise<T> | undefined
  if (promise === undefined) {
    promise = read()
    reads.set(key, promise)
  }
  return promise
}

/**
 * Runs one long poll and resolves with the backlog, one live item, or `[]`.
 *
 * @example
 * const items = await longPoll({ doorbell, waitSeconds: 30, signal, waiters, routes, highWater, backlog, load, accepts })
 */
export function longPoll<T> (spec: LongPollSpec<T>): Promise<T[]> {
  if (spec.signal?.aborted === true || spec.waiters?.closed === true) return Promise.resolve([])
  if (spec.waitSeconds <= 0) return spec.highWater().then((mark) => spec.backlog(mark)).then((items) => items ?? [])
  return new Waiter(spec).promise
}

/**
 * One parked poll as one object (thousands may be parked at once, so it keeps to a few
 * fields and two bound callbacks rather than a closure per step; the spec's functions are
 * called as its methods, so a spec may be a class instance).
 */
class Waiter<T> {
  readonly promise: Promise<T[]>
  private resolve!: (items: T[]) => void
  private reject!: (error: unknown) => void
  /** Reads started for the doorbells that rang, in order. */
  private queue: Array<Promise<T | undefined>> = []
  private mark: HighWater | undefined
  /** The subscribe-time high-water mark, for re-reading the backlog on a `resync`. */
  private readonly marked: Promise<HighWater>
  private done = false
  private draining = false
  private timer: NodeJS.Timeout | undefined
  private readonly unsubscribe: () => void
  private registered = false
  private readonly spec: LongPollSpec<T>

  constructor (spec: LongPollSpec<T>) {
    this.spec = spec
    this.promise = new Promise<T[]>((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
    // Subscribe first: a doorbell that rings while the backlog is read is kept, not lost.
    this.unsubscribe = dispatcherFor(spec.doorbell).register(spec.keys ?? ALL_KINDS, this.onEvent)
    // These callbacks live until the backlog is read, not while the poll is parked.
    this.marked = spec.highWater()
    this.marked
      .then((mark) => {
        this.mark = mark
        return spec.backlog(mark)
      })
      .then((backlog) => {
        if (backlog === null) this.finish([])
        else if (backlog.length > 0) this.finish(backlog)
        else this.park()
      }, (error: unknown) => this.fail(error))
  }

  private readonly onEvent = (event: DoorbellEvent): void => {
    if (event.kind === 'resync') return this.resync(event)
    if (event.kind === 'revoke') {
      if (this.spec.revokedBy?.(event) === true) this.finish([])
      return
    }
    if (this.done || !this.spec.routes(event)) return
    const read = this.spec.load(event)
    read.catch(() => undefined)
    this.queue.push(read)
    if (this.mark !== undefined && this.timer !== undefined) void this.drain()
  }

  /**
   * Doorbells may have been lost (the doorbell reconnected): read the backlog again from the
   * subscribe-time mark, as a fresh poll would, and answer with it if anything arrived.
   */
  private resync (event: DoorbellEvent): void {
    if (this.done) return
    this.marked
      .then(async (mark) => {
        const key = this.spec.resyncKey?.()
        const items = key === undefined
          ? await this.spec.backlog(mark)
          : await sharedResyncRead(event, key, () => this.spec.backlog(mark))
        const fresh = items?.filter((item) => this.spec.accepts(item, mark)) ?? []
        if (fresh.length > 0) this.finish(fresh)
      })
      .catch(this.fail)
  }

  private readonly release = (): void => {
    this.finish([])
  }

  private fail (error: unknown): void {
    if (this.done) return
    this.cleanup()
    this.reject(error)
  }

  private park (): void {
    if (this.done) return
    const { signal, waiters, waitSeconds } = this.spec
    this.timer = setTimeout(this.release, waitSeconds * 1000)
    if (signal !== undefined) signal.addEventListener('abort', this.release)
    if (waiters !== undefined) {
      waiters.add(this.release)
      this.registered = true
    }
    if (signal?.aborted === true || waiters?.closed === true) this.finish([])
    else void this.drain()
  }

  private async drain (): Promise<void> {
    if (this.draining) return
    this.draining = true
    try {
      while (!this.done && this.queue.length > 0) {
        const item = await this.queue.shift()!
        if (item !== undefined && !this.done && this.spec.accepts(item, this.mark!)) this.finish([item])
      }
    } catch (error) {
      this.fail(error)
    } finally {
      this.draining = false
    }
  }

  private finish (items: T[]): void {
    if (this.done) return
    this.cleanup()
    this.resolve(items)
  }

  private cleanup (): void {
    this.done = true
    this.queue = []
    this.unsubscribe()
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.spec.signal?.removeEventListener('abort', this.release)
    if (this.registered) this.spec.waiters!.remove(this.release)
  }
}
