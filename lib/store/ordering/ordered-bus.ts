/**
 * Puts bus events back in stamp order, for stores whose writes commit out of it: the PostgreSQL
 * dialect's side of the log's order (postgres-ordering.ts builds it; core sees only the
 * `OrderedLog` it makes).
 *
 * On PostgreSQL no lock is held until commit (migration 0006): writers draw stamps and ids under
 * a short mutex, so stamps follow draw order while commits, and the NOTIFYs they send, land in
 * any order. A reader that saw stamp 7 before stamp 6 committed would move its cursor past 6 and
 * lose it. Every such event carries its link in the draw chain (`DrawLink`: the stamp drawn just
 * before it, its own stamp, a transaction id above every writer that drew before it), and the ordered bus releases
 * an event only once the event of the stamp before it was released: listeners see stamps in
 * draw order, as they did when commits followed it.
 *
 * `mark()` is the last stamp released (and the largest ids): every item at or below it is
 * committed, every later one will be released after the mark was read. Readers register, take
 * the mark, read the store up to it and take the rest live; no read of the store's high-water
 * mark is needed. The mark lags another instance's write by its NOTIFY's trip. This process's own
 * writes come from the log (`written`, with the link the statement answered) rather than their
 * NOTIFY, which the bus underneath drops without parsing it; a NOTIFY that comes anyway (its bus
 * does not know the sender) is a duplicate, at or below the mark or queued already, and changes
 * nothing. `caughtUp()` lets a reader wait (briefly) for this process's own acknowledged writes,
 * so a client that wrote and then polls the same instance finds its write in the backlog.
 *
 * A link can go missing: a statement that drew and then failed, or a NOTIFY lost with the LISTEN
 * connection. When the head of the queue has waited `settleCheckMs`, the store is asked whether
 * every transaction that drew before it has ended (`StampOrder.settled`); if so, and the head
 * still has not moved one interval later (a NOTIFY may still be on its way), the ordered bus
 * resynchronises: it reads the draw's position, waits until everything drawn up to it has
 * settled, moves the mark there, drops queued events at or below it, and tells every listener
 * to read again (`resync`). The same happens at start and when the bus underneath resyncs.
 *
 * A transaction that keeps a transaction id for long (anywhere in the database cluster) holds
 * back only that check, never an event whose chain is complete.
 */
import type { Logger, Store } from '../../core/ports.js'
import { silentLogger } from '../../core/ports.js'
import type { Bus, BusEvent, MessageEvent, MessageKind } from '../../core/realtime/bus.js'
import { createListenerSet } from '../../core/realtime/listener-set.js'
import type { LogCursor } from '../../core/realtime/log-cursor.js'
import { furthest } from '../../core/realtime/log-cursor.js'
import type { LogOrder } from '../../core/realtime/message-log.js'
import { createCatchUps } from './catch-ups.js'
import { createNewestStamps } from '../../core/realtime/newest-stamps.js'
import type { DrawHorizon, StampOrder } from './stamp-order.js'

export interface OrderedBusOptions {
  /** How long the head of the queue waits before the store is asked whether its gap is settled (default 20 ms). */
  settleCheckMs?: number
  /** Longest `caughtUp()` waits for the mark to reach this process's own writes (default 250 ms). */
  catchUpMs?: number
  logger?: Logger
}

/** How long a settled gap must stay a gap before the resync: its NOTIFY may still be on the way. */
const CONFIRM_MS = 100

/**
 * A bus whose listeners get chained events in stamp order, and the order of the log it keeps
 * (the mark). `publish` and `close` go to the bus underneath.
 */
export interface OrderedBus extends Bus, LogOrder {
  /** Events waiting for an earlier link (monitoring and tests). */
  readonly waiting: number
  /** Resynchronisations since the start (gaps, reconnects), the first one not counted. */
  readonly resyncs: number
}

/** The mark once `event` (the next link of the chain) is released. */
function advance (mark: LogCursor, event: MessageEvent): LogCursor {
  return {
    clock: event.order!.stamp,
    notification: event.kind === 'notification' ? Math.max(event.id, mark.notification) : mark.notification,
    command: event.kind === 'command' ? Math.max(event.id, mark.command) : mark.command
  }
}

/** The queued event with the lowest stamp. */
function firstWaiting (waiting: ReadonlyMap<number, MessageEvent>): MessageEvent {
  let first: MessageEvent | undefined
  for (const event of waiting.values()) {
    if (first === undefined || event.order!.stamp < first.order!.stamp) first = event
  }
  return first!
}

/**
 * The draw's position once everything drawn up to it has settled. `again()` says a newer
 * position is wanted (a resync asked for while this one waited).
 */
async function settledHorizon (order: StampOrder, again: () => boolean, closed: () => boolean, logger: Logger): Promise<DrawHorizon> {
  let delay = 2
  let horizon = await order.horizon()
  const since = Date.now()
  while (!closed() && !(await order.settled(horizon.nextXid))) {
    if (Date.now() - since > 5_000 && delay < 200) {
      logger.warn({ nextXid: horizon.nextXid }, 'ordered bus waits for a long transaction to end')
    }
    await new Promise((resolve) => setTimeout(resolve, delay))
    delay = Math.min(delay * 2, 200)
    if (again()) horizon = await order.horizon()
  }
  return horizon
}

/**
 * Resolves once the first mark is known.
 *
 * @example
 * const bus = await createOrderedBus(await createPostgresDoorbell(url), createStampOrder(store.db))
 * const { clock } = bus.mark()
 */
export async function createOrderedBus (
  inner: Bus,
  order: StampOrder,
  options: OrderedBusOptions = {}
): Promise<OrderedBus> {
  const logger = options.logger ?? silentLogger
  const settleCheckMs = options.settleCheckMs ?? 20
  const listeners = createListenerSet((error) => { logger.error({ err: error }, 'bus listener failed') })
  const newest = createNewestStamps()
  const catchUps = createCatchUps(options.catchUpMs ?? 250)
  /** Chained events waiting for their predecessor, by the stamp drawn before theirs. */
  const waiting = new Map<number, MessageEvent>()
  let mark: LogCursor | undefined
  let syncing: Promise<void> | undefined
  let syncAgain = false
  let checkTimer: NodeJS.Timeout | undefined
  let closed = false
  let resyncs = -1
  /** The mark at which the store last said the gap had settled (see checkGap). */
  let settledAt: number | undefined

  const release = (event: MessageEvent): void => {
    newest.remember(event.kind, event.deviceId, event.order!.stamp, mark!.clock, event.record)
    mark = advance(mark!, event)
    listeners.deliver(event)
    catchUps.reached(mark.clock)
  }

  /** Releases every queued event whose predecessor is released. */
  const drain = (): void => {
    if (mark === undefined || syncing !== undefined) return
    for (let next = waiting.get(mark.clock); next !== undefined; next = waiting.get(mark.clock)) {
      waiting.delete(mark.clock)
      release(next)
    }
    if (waiting.size > 0) scheduleCheck()
    else if (checkTimer !== undefined) {
      clearTimeout(checkTimer)
      checkTimer = undefined
    }
  }

  const scheduleCheck = (delay = settleCheckMs): void => {
    if (checkTimer !== undefined || closed) return
    const head = mark!.clock
    checkTimer = setTimeout(() => {
      checkTimer = undefined
      void checkGap(head)
    }, delay)
    checkTimer.unref()
  }

  /** The head has not moved since `head`: resynchronise if everything drawn before the queue has settled. */
  const checkGap = async (head: number): Promise<void> => {
    if (closed || syncing !== undefined || mark === undefined || waiting.size === 0) return
    if (mark.clock !== head) return drain()
    try {
      if (await order.settled(firstWaiting(waiting).order!.nextXid) && mark.clock === head && waiting.size > 0) {
        // Settled means every earlier writer ended, not that its NOTIFY has reached this process:
        // give it one more interval before paying for a resync of every listener.
        if (settledAt !== head) {
          settledAt = head
          scheduleCheck(CONFIRM_MS)
          return
        }
        logger.warn({ mark: head, waiting: waiting.size }, 'bus chain has a gap (a failed write or a lost notification); resynchronising')
        await resynchronise()
        return
      }
    } catch (error) {
      logger.warn({ err: error }, 'ordered bus could not check its chain')
    }
    drain()
  }

  /** Moves the mark to the draw's settled position, drops what it covers. */
  const moveToHorizon = async (): Promise<void> => {
    const again = (): boolean => {
      const wanted = syncAgain
      syncAgain = false
      return wanted
    }
    const horizon = await settledHorizon(order, again, () => closed, logger)
    mark = furthest(horizon.cursor, mark)
    for (const [prev, event] of waiting) {
      if (event.order!.stamp <= mark.clock) waiting.delete(prev)
    }
    // What the re-read covers is not known per device.
    newest.forget(mark.clock)
  }

  /** Moves the mark to the draw's settled position and tells every listener to read again. */
  const resynchronise = async (): Promise<void> => {
    if (syncing !== undefined) {
      syncAgain = true
      return syncing
    }
    syncing = moveToHorizon()
    try {
      await syncing
    } finally {
      syncing = undefined
      syncAgain = false
      settledAt = undefined
    }
    resyncs++
    catchUps.reached(mark!.clock)
    // A fresh object per resync: streams share their re-reads by event.
    listeners.deliver({ kind: 'resync' })
    drain()
  }

  const onEvent = (event: BusEvent): void => {
    if (closed) return
    if (event.kind === 'resync') {
      resynchronise().catch((error: unknown) => {
        logger.error({ err: error }, 'ordered bus could not resynchronise')
        listeners.deliver(event)
      })
      return
    }
    const link = 'order' in event ? event.order : undefined
    if (link === undefined) {
      listeners.deliver(event)
      return
    }
    // At or below the mark, or queued already: a duplicate (its own write's NOTIFY, see `written`).
    if ((mark !== undefined && link.stamp <= mark.clock) || waiting.has(link.prev)) return
    waiting.set(link.prev, event as MessageEvent)
    drain()
  }

  const unsubscribe = inner.subscribe(onEvent)
  try {
    await resynchronise()
  } catch (error) {
    unsubscribe()
    throw error
  }

  return {
    get waiting () {
      return waiting.size
    },
    get resyncs () {
      return resyncs
    },
    mark: () => ({ ...mark! }),
    knownAfter: (kind: MessageKind, deviceId: string, after: number) => newest.knownAfter(kind, deviceId, after),
    caughtUp: () => closed ? Promise.resolve() : catchUps.wait(mark!.clock),
    written: (event) => {
      catchUps.written(event)
      // Its own writes' NOTIFYs are not delivered by the bus (postgres-ordering.ts): queued here as if heard.
      if (event.order !== undefined) onEvent(event)
    },
    publish: (event: BusEvent, tx?: Store) => inner.publish(event, tx),
    subscribe: (listener) => listeners.add(listener),
    async close () {
      closed = true
      if (checkTimer !== undefined) clearTimeout(checkTimer)
      unsubscribe()
      listeners.clear()
      waiting.clear()
      catchUps.releaseAll()
      await inner.close()
    }
  }
}
