/**
 * A continuous message stream: the core of every push transport (WebSocket subscriptions,
 * Server-Sent Events) and a sibling of the one-shot long poll (long-poll.ts) built from the same
 * rules. Order of work, so that nothing is lost or repeated (R9):
 *
 * 1. register in the hub's router (events published from now on are queued, not lost);
 * 2. take the log's mark (`MessageLog.mark()`): live items are those after it (`fresh`);
 * 3. read the first backlog page after the given cursor up to the mark (oldest first, pages of 100
 *    up to `backlogLimit`); what came after the mark arrives live;
 * 4. `start(sink)`: hand over the backlog page by page, then the queued and later live items in
 *    bus order, skipping live items a backlog page or a resync read already delivered.
 *
 * No store connection is held between events. A `resync` (events may have been lost) reads
 * again after the newest cursor delivered, page by page up to the log's mark then; streams with
 * the same resync key and cursor share the first page's read (and all share one mark). The
 * stream registers in the hub's routing index (router.ts), so an event costs work only for the
 * streams of its device, network or device type.
 *
 * Every transport consumes it: WebSocket subscriptions and SSE with `start()`, REST long polls
 * with `longPoll()` (long-poll.ts), which takes the first batch and closes the stream. The one
 * spec of both message kinds is built by `createStreamSpec` (message-stream-spec.ts).
 */
import { DeviceHubError } from '../errors.js'
import type { WaiterRegistry } from './cancellation.js'
import type { MessageEvent, RevokeEvent } from './bus.js'
import type { LogCursor } from './log-cursor.js'
import { cursorAtClock } from './log-cursor.js'
import type { RoutedEvent, RoutedResync, Router, RoutingKeys } from './router.js'

/** One delivered item and its cursor (epoch ms of the server's stamp: the insert's, or `lastUpdated` for command updates). */
export interface StreamItem<V> {
  cursor: number
  item: V
}

export interface MessageStreamSpec<R, V> {
  /** The hub's routing index the stream registers in. */
  router: Router
  /** Closes the stream at shutdown. */
  waiters?: WaiterRegistry
  /**
   * Where the stream registers in the router, so that only events for its
   * devices / networks / device types reach it. Absent = every event.
   */
  readonly keys?: RoutingKeys
  /**
   * Identifies what `readAfter` reads (kind and selector): on a `resync`, streams with equal
   * keys and equal cursors share one read instead of one each. Absent = own read.
   */
  resyncKey?(): string
  /** Cheap check on the event's routing keys, before any read. */
  routes(event: MessageEvent): boolean
  /** The log's mark as it stands now (`MessageLog.mark()`): a resync reads up to it. */
  mark(): Promise<LogCursor>
  /** Replaces `mark()` at open (the command wait: its command's lookup is its mark, one query). */
  openMark?(): Promise<LogCursor>
  /** Items after `after` and at or below `upTo`, oldest first, at most `limit` (`MessageLog.readAfter`). */
  readAfter(after: LogCursor, upTo: LogCursor, limit: number): Promise<R[]>
  /**
   * What the log knows, without a read, this stream finds after `after` up to `upTo` (one device,
   * see `MessageLog.knownAfter`): nothing, or the device's one newer record; undefined: read.
   */
  known?(after: LogCursor, upTo: LogCursor): readonly R[] | undefined
  /** The item an event names (shared between listeners); undefined when gone. */
  load(event: MessageEvent): Promise<R | undefined>
  /** Filters of a live item (scope at event time, names, lifetime). */
  matches(item: R): boolean
  /** Whether a live item is after the mark the stream opened at (else the backlog had it). */
  fresh(item: R, mark: LogCursor): boolean
  cursorOf(item: R): number
  /** The delivered view of a record (memoise it: one view per record for every stream). */
  view(item: R): V
  /** Distinguishes deliveries (id, or id and lastUpdated for updates). */
  keyOf(item: R): string | number
  /**
   * Whether a `revoke` event concerns the subscriber (`auth/revocations.ts` `revokes`): the
   * stream then stops and reports a {@link StreamRevokedError}, so the transport makes the
   * client authenticate again under its current rights (issue #16).
   */
  revokedBy?(event: RevokeEvent): boolean
  /**
   * After a `resync`, whose lost events may have held a `revoke` for the subscriber: whether it
   * still holds every right it opened with (shared by the streams the resync reaches). False
   * stops the stream as `revokedBy` does, before the resync delivers anything.
   */
  rightsHeld?(resync: RoutedResync): Promise<boolean>
  /** Backlog cursor: items after it; `undefined` = live only. */
  after?: LogCursor
  /** Most backlog items delivered (default: all). */
  backlogLimit?: number
  /** Backlog page size (default 100); a long poll reads its whole answer as one page. */
  pageSize?: number
  /** Called once when the stream closes, before the listeners given to its `onClose` (a device's presence ends). */
  onClose?(): void
}

/** Receives items in order; returning a promise holds delivery until it settles (backpressure). */
export type StreamSink<V> = (item: StreamItem<V>) => void | Promise<void>

/** A running stream; see {@link openMessageStream}. */
export interface MessageStream<V> {
  /**
   * Starts delivery: the backlog (read page by page), then live items as they come. `onError`
   * is called at most once (a store failure); the stream is closed then. `onBatch` is called
   * after each batch handed to the sink (a backlog page, a resync read, one live item) and
   * whenever nothing is left to deliver: a long poll answers then.
   */
  start(sink: StreamSink<V>, onError?: (error: unknown) => void, onBatch?: () => void): void
  /** Stops delivery and releases the router listener. Idempotent. */
  close(): void
  readonly closed: boolean
  /**
   * Calls `listener` once when the stream closes (by `close()`, shutdown, a revoke or an error);
   * at once when it is closed already. The transport's own hook, not a replaced method.
   */
  onClose(listener: () => void): void
}

const PAGE = 100
/** The key of the mark every stream a resync reaches reads up to (stream keys are JSON arrays). */
const RESYNC_MARK = 'mark'
const ALL_KINDS: RoutingKeys = { kinds: ['command', 'command-update', 'notification'] }

/** One read per resync key and cursor, shared by the streams the resync reaches. */
function sharedResyncRead<T> (event: RoutedResync, key: string, read: () => Promise<T>): Promise<T> {
  let promise = event.reads.get(key) as Promise<T> | undefined
  if (promise === undefined) {
    promise = read()
    event.reads.set(key, promise)
  }
  return promise
}

/** Why a stream stopped when the subscriber's rights changed (role, status, password, assignments). */
export class StreamRevokedError extends Error {
  constructor () {
    super('Access rights changed')
    this.name = 'StreamRevokedError'
  }
}

/** What a resync read found: a page of items after a cursor, and the mark it read up to. */
interface ResyncPage<R> {
  items: R[]
  upTo: LogCursor
}

/** A queue entry: the first page a resync read found (later pages are read as it is delivered). */
class Resynced<R> {
  /** `page` undefined: the subscriber's rights were lost (`rightsHeld`). */
  constructor (readonly page: ResyncPage<R> | undefined) {}
}

/**
 * Opens a stream; resolves once the backlog is read (failures of that read reject).
 *
 * @example
 * const stream = await openMessageStream(spec)
 * stream.start(({ cursor, item }) => send(cursor, item))
 * stream.close()
 */
export async function openMessageStream<R, V> (spec: MessageStreamSpec<R, V>): Promise<MessageStream<V>> {
  const stream = new Stream(spec)
  try {
    await stream.open()
  } catch (error) {
    stream.close()
    throw error
  }
  return stream
}

/** One stream as one object with prototype methods: thousands may be open at once. */
class Stream<R, V> implements MessageStream<V> {
  closed = false
  /** Called once at close; most streams have one (their transport's). */
  private closeListeners: Array<() => void> | undefined
  private mark: LogCursor = cursorAtClock(0)
  /** The backlog page read and not yet delivered. */
  private backlog: R[] = []
  /** Backlog items still allowed after this page (the cap), and whether the store may hold more. */
  private remaining = 0
  private more = false
  /** Cursor of the last backlog item read (the next page reads after it). */
  private pageAfter = 0
  /** Keys of backlog items that are also fresh: their event may still come. */
  private seen: Set<string | number> | undefined
  /**
   * The mark of the latest resync delivered: everything at or below it was read then, so a live
   * event of an item it covers is late and skipped. A bound, not a key per item: the events of
   * what a resync found were mostly dropped, and a key kept for each would never be claimed.
   */
  private resyncedUpTo: LogCursor | undefined
  /** Newest cursor delivered (the next backlog page and a resync read after it). */
  private last = 0
  /** Reads in bus order: one item, or what a resync read found. */
  private queue: Array<Promise<R | Resynced<R> | undefined>> = []
  private sink: StreamSink<V> | undefined
  private onError: ((error: unknown) => void) | undefined
  private onBatch: (() => void) | undefined
  private draining = false
  private readonly unsubscribe: () => void
  private registered = false
  /** Settles when `open()` has taken the mark: a resync read waits for it (it reads after `last`). */
  private opening: Promise<void> = Promise.resolve()

  constructor (private readonly spec: MessageStreamSpec<R, V>) {
    this.unsubscribe = spec.router.register(spec.keys ?? ALL_KINDS, this.onEvent)
  }

  open (): Promise<void> {
    this.opening = this.takeMark()
    return this.opening
  }

  private async takeMark (): Promise<void> {
    const { spec } = this
    this.mark = await (spec.openMark ?? spec.mark).call(spec)
    this.last = Math.max(this.mark.clock, spec.after?.clock ?? 0)
    if (spec.after !== undefined) {
      this.remaining = spec.backlogLimit ?? Number.POSITIVE_INFINITY
      await this.readPage(spec.after)
    }
    if (spec.waiters !== undefined) {
      if (spec.waiters.closed) throw new DeviceHubError('UNAVAILABLE', 'Server is shutting down')
      spec.waiters.add(this.release)
      this.registered = true
    }
  }

  /** Reads the next backlog page (at most 100, within the cap) after `after`, up to the mark. */
  private async readPage (after: LogCursor): Promise<void> {
    const known = after.clock >= this.mark.clock ? [] : this.spec.known?.(after, this.mark)
    if (known?.length === 0) {
      // Nothing is committed between the cursor and the mark (for this stream); everything later
      // arrives live. A client re-polling with its newest cursor costs no read.
      this.more = false
      return
    }
    const want = Math.min(this.spec.pageSize ?? PAGE, this.remaining)
    const page = want > 0 ? known?.slice() ?? await this.spec.readAfter(after, this.mark, want) : []
    this.remaining -= page.length
    this.more = page.length === want && this.remaining > 0
    if (page.length > 0) this.pageAfter = this.spec.cursorOf(page[page.length - 1]!)
    for (const item of page) {
      if (this.spec.fresh(item, this.mark)) (this.seen ??= new Set()).add(this.spec.keyOf(item))
    }
    this.backlog = page
  }

  onClose (listener: () => void): void {
    if (this.closed) listener()
    else (this.closeListeners ??= []).push(listener)
  }

  start (sink: StreamSink<V>, onError?: (error: unknown) => void, onBatch?: () => void): void {
    if (this.closed || this.sink !== undefined) return
    this.sink = sink
    this.onError = onError
    this.onBatch = onBatch
    void this.drain()
  }

  private readonly release = (): void => {
    this.close()
  }

  private readonly onEvent = (event: RoutedEvent): void => {
    if (this.closed) return
    if (event.kind === 'revoke') {
      if (this.spec.revokedBy?.(event) !== true) return
      const onError = this.onError
      this.close()
      onError?.(new StreamRevokedError())
      return
    }
    if (event.kind === 'resync') {
      // Reads after the newest cursor delivered when the read runs (after what is queued before
      // it, and after the open took its mark: until then `last` is not the stream's cursor).
      const previous = this.queue.length > 0 ? this.queue[this.queue.length - 1]! : this.opening
      const read = previous.catch(() => undefined).then(() => this.resyncRead(event)).then((page) => new Resynced(page))
      read.catch(() => undefined)
      this.queue.push(read)
    } else if (event.kind !== 'plugin' && this.spec.routes(event)) {
      const read = this.spec.load(event)
      read.catch(() => undefined)
      this.queue.push(read)
    } else {
      return
    }
    if (this.sink !== undefined) void this.drain()
  }

  /**
   * Reads the first page after the newest cursor delivered, up to the log's mark as the resync
   * found it (one mark for every stream it reaches: taken after the resync, so whatever lies
   * above it arrives live after the resync); shared with the streams of equal key, page size and
   * cursor. The drain reads the pages after it (`deliverResynced`).
   */
  private async resyncRead (event: RoutedResync): Promise<ResyncPage<R> | undefined> {
    if (this.spec.rightsHeld !== undefined && !(await this.spec.rightsHeld(event))) return undefined
    const after = this.last
    const size = this.spec.pageSize ?? PAGE
    const key = this.spec.resyncKey?.()
    const read = async (): Promise<ResyncPage<R>> => {
      const upTo = await sharedResyncRead(event, RESYNC_MARK, () => this.spec.mark())
      return { items: await this.spec.readAfter(cursorAtClock(after), upTo, size), upTo }
    }
    return key === undefined ? read() : sharedResyncRead(event, `${key}:${size}@${after}`, read)
  }

  /**
   * Delivers what a resync found, page by page up to its mark: everything up to it was dropped
   * from the bus, so a page left unread would be lost. A long poll answers at the first page.
   */
  private async deliverResynced (page: ResyncPage<R>): Promise<void> {
    const size = this.spec.pageSize ?? PAGE
    // Set first: a live event behind the resync in the queue waits for these pages. Every key
    // the backlog kept is at or below this mark (taken after the stream's), so none is needed.
    if (this.resyncedUpTo === undefined || page.upTo.clock > this.resyncedUpTo.clock) this.resyncedUpTo = page.upTo
    this.seen = undefined
    for (let items = page.items; ; ) {
      for (const found of items) {
        if (this.closed) return
        if (!this.spec.matches(found) || this.spec.cursorOf(found) <= this.last) continue
        await this.deliver(found)
      }
      this.onBatch?.()
      if (items.length < size || this.closed) return
      const after = Math.max(this.spec.cursorOf(items[items.length - 1]!), this.last)
      items = await this.spec.readAfter(cursorAtClock(after), page.upTo, size)
    }
  }

  /** Delivers the backlog pages, then the live items; waits whenever the sink asks to. */
  private async drain (): Promise<void> {
    if (this.draining) return
    this.draining = true
    try {
      while (!this.closed) {
        if (this.backlog.length > 0) {
          const page = this.backlog
          this.backlog = []
          for (const item of page) {
            if (this.closed) return
            await this.deliver(item)
          }
          this.onBatch?.()
          if (this.more && !this.closed) await this.readPage(cursorAtClock(this.pageAfter))
          continue
        }
        if (this.queue.length === 0) {
          this.onBatch?.()
          break
        }
        const item = await this.queue.shift()!
        if (item === undefined || this.closed) continue
        if (item instanceof Resynced) {
          if (item.page === undefined) throw new StreamRevokedError()
          await this.deliverResynced(item.page)
          continue
        }
        if (!this.spec.matches(item) || !this.spec.fresh(item, this.mark)) continue
        if (this.resyncedUpTo !== undefined && !this.spec.fresh(item, this.resyncedUpTo)) continue
        if (this.seen !== undefined && this.seen.delete(this.spec.keyOf(item))) continue
        await this.deliver(item)
        this.onBatch?.()
      }
    } catch (error) {
      const onError = this.onError
      this.close()
      onError?.(error)
    } finally {
      this.draining = false
    }
  }

  /** Hands one item to the sink; a sink that returns a promise holds delivery until it settles. */
  private deliver (item: R): Promise<void> | undefined {
    const sink = this.sink
    // Closed (close() lets go of the sink).
    if (sink === undefined) return undefined
    const cursor = this.spec.cursorOf(item)
    if (cursor > this.last) this.last = cursor
    const wait = sink({ cursor, item: this.spec.view(item) })
    return wait === undefined ? undefined : wait
  }

  close (): void {
    if (this.closed) return
    this.closed = true
    this.queue = []
    this.backlog = []
    // Let go of the consumer's callbacks. A stream that lived through two scavenges is in V8's
    // old generation, and until the next full collection a dead old object still holds whatever
    // young objects it points at: through the sink, a long poll's answer (its items, its
    // response) would be copied by the next scavenges and promoted (issue #26).
    this.sink = undefined
    this.onError = undefined
    this.onBatch = undefined
    this.unsubscribe()
    if (this.registered) this.spec.waiters!.remove(this.release)
    this.spec.onClose?.()
    const listeners = this.closeListeners
    this.closeListeners = undefined
    if (listeners !== undefined) for (const listener of listeners) listener()
  }
}

/**
 * Reads a stream as an async iterable (for code that prefers `for await`); items are buffered
 * without bound, so transports that may meet slow readers use `start()` with their own cap.
 *
 * @example
 * for await (const { item } of iterateStream(stream)) console.log(item)
 */
export async function * iterateStream<V> (stream: MessageStream<V>): AsyncGenerator<StreamItem<V>> {
  const buffer: Array<StreamItem<V>> = []
  let wake: (() => void) | undefined
  let failure: { error: unknown } | undefined
  stream.onClose(() => wake?.())
  stream.start((item) => {
    buffer.push(item)
    wake?.()
  }, (error) => {
    failure = { error }
  })
  try {
    while (true) {
      if (buffer.length > 0) {
        yield buffer.shift()!
        continue
      }
      if (failure !== undefined) throw failure.error
      if (stream.closed) return
      await new Promise<void>((resolve) => { wake = resolve })
      wake = undefined
    }
  } finally {
    stream.close()
  }
}
