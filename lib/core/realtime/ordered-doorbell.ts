/**
 * Puts doorbell events back in stamp order, for stores whose writes commit out of it.
 *
 * On PostgreSQL no lock is held until commit (migration 0006): writers draw stamps and ids under
 * a short mutex, so stamps follow draw order while commits, and the NOTIFYs they send, land in
 * any order. A reader that saw stamp 7 before stamp 6 committed would move its cursor past 6 and
 * lose it. Every such event carries its link in the draw chain (`DrawLink`: the stamp drawn just
 * before it, its own stamp, the next transaction id after its draw), and this wrapper releases
 * an event only once the event of the stamp before it was released: listeners see stamps in
 * draw order, as they did when commits followed it.
 *
 * `mark()` is the last stamp released (and the largest ids): every item at or below it is
 * committed, every later one will be released after the mark was read. Readers register, take
 * the mark, read the store up to it and take the rest live; no read of the store's high-water
 * mark is needed. The mark lags a write by its NOTIFY's trip; `caughtUp()` lets a reader wait
 * (briefly) for this process's own acknowledged writes, so a client that wrote and then polls
 * the same instance finds its write in the backlog.
 *
 * A link can go missing: a statement that drew and then failed, or a NOTIFY lost with the LISTEN
 * connection. When the head of the queue has waited `settleCheckMs`, the store is asked whether
 * every transaction that drew before it has ended (`StampOrder.settled`); if so, and the head
 * still has not moved one interval later (a NOTIFY may still be on its way), the wrapper
 * resynchronises: it reads the draw's position, waits until everything drawn up to it has
 * settled, moves the mark there, drops queued events at or below it, and tells every listener
 * to read again (`resync`). The same happens at start and when the inner doorbell resyncs.
 *
 * A transaction that keeps a transaction id for long (anywhere in the database cluster) holds
 * back only that check, never an event whose chain is complete.
 */
import type { Logger, StampOrder, Store } from '../ports.js'
import { silentLogger } from '../ports.js'
import type { Bus, BusEvent, MessageEvent, MessageKind } from './bus.js'
import type { LogCursor } from './log-cursor.js'
import { createListenerSet } from './listener-set.js'
import type { LogOrder } from './message-log.js'

export interface OrderedDoorbellOptions {
  /** How long the head of the queue waits before the store is asked whether its gap is settled (default 20 ms). */
  settleCheckMs?: number
  /** Longest `caughtUp()` waits for the mark to reach this process's own writes (default 250 ms). */
  catchUpMs?: number
  logger?: Logger
}

/** How long a settled gap must stay a gap before the resync: its NOTIFY may still be on the way. */
const CONFIRM_MS = 100

/** Devices remembered per kind before the memory starts over from the mark (`newestFor`). */
const MAX_DEVICES = 100_000

interface CatchUp {
  stamp: number
  resolve(): void
}

/**
 * A bus whose listeners get chained events in stamp order, and the order of the log it keeps
 * (the mark). `publish` and `close` go to the inner bus.
 */
export interface OrderedDoorbell extends Bus, LogOrder {
  /** Events waiting for an earlier link (monitoring and tests). */
  readonly waiting: number
  /** Resynchronisations since the start (gaps, reconnects), the first one not counted. */
  readonly resyncs: number
}

/**
 * Resolves once the first mark is known.
 *
 * @example
 * const doorbell = await createOrderedDoorbell(await createPostgresDoorbell(url), store.stampOrder!)
 * const { clock } = doorbell.mark()
 */
export async function createOrderedDoorbell (
  inner: Bus,
  order: StampOrder,
  options: OrderedDoorbellOptions = {}
): Promise<OrderedDoorbell> {
  const logger = options.logger ?? silentLogger
  const settleCheckMs = options.settleCheckMs ?? 20
  const catchUpMs = options.catchUpMs ?? 250
  const listeners = createListenerSet((error) => { logger.error({ err: error }, 'doorbell listener failed') })
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
  /** Newest stamp of a write this process acknowledged (`written`), and readers waiting for the mark to reach it. */
  let acknowledged = 0
  let catchUps: CatchUp[] = []
  /**
   * Per kind and device, the newest stamp released; `floor`: the mark of the last resynchronisation
   * (or of a memory that started over), below which nothing is known per device.
   */
  const newest = new Map<string, Map<string, number>>()
  let floor = 0

  const remember = (event: MessageEvent, stamp: number): void => {
    let devices = newest.get(event.kind)
    if (devices === undefined) newest.set(event.kind, devices = new Map())
    if (devices.size >= MAX_DEVICES && !devices.has(event.deviceId)) {
      devices.clear()
      floor = mark!.clock
    }
    devices.set(event.deviceId, stamp)
  }

  const resolveCaughtUp = (): void => {
    if (catchUps.length === 0 || mark === undefined) return
    let n = 0
    while (n < catchUps.length && catchUps[n]!.stamp <= mark.clock) catchUps[n++]!.resolve()
    if (n > 0) catchUps = catchUps.slice(n)
  }

  const release = (event: MessageEvent): void => {
    const current = mark!
    remember(event, event.order!.stamp)
    mark = {
      clock: event.order!.stamp,
      notification: event.kind === 'notification' ? Math.max(event.id, current.notification) : current.notification,
      command: event.kind === 'command' ? Math.max(event.id, current.command) : current.command
    }
    listeners.deliver(event)
    resolveCaughtUp()
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
    let first: MessageEvent | undefined
    for (const event of waiting.values()) {
      if (first === undefined || event.order!.stamp < first.order!.stamp) first = event
    }
    try {
      if (await order.settled(first!.order!.nextXid) && mark.clock === head && waiting.size > 0) {
        // Settled means every earlier writer ended, not that its NOTIFY has reached this process:
        // give it one more interval before paying for a resync of every listener.
        if (settledAt !== head) {
          settledAt = head
          scheduleCheck(CONFIRM_MS)
          return
        }
        const why = 'doorbell chain has a gap (a failed write or a lost notification); resynchronising'
        logger.warn({ mark: head, waiting: waiting.size }, why)
        await resynchronise()
        return
      }
    } catch (error) {
      logger.warn({ err: error }, 'doorbell could not check its chain')
    }
    drain()
  }

  /** Moves the mark to the draw's settled position and tells every listener to read again. */
  const resynchronise = async (): Promise<void> => {
    if (syncing !== undefined) {
      syncAgain = true
      return syncing
    }
    syncing = (async () => {
      let delay = 2
      let horizon = await order.horizon()
      const since = Date.now()
      while (!closed && !(await order.settled(horizon.nextXid))) {
        if (Date.now() - since > 5_000 && delay < 200) {
          logger.warn({ nextXid: horizon.nextXid }, 'doorbell waits for a long transaction to end')
        }
        await new Promise((resolve) => setTimeout(resolve, delay))
        delay = Math.min(delay * 2, 200)
        if (syncAgain) {
          syncAgain = false
          horizon = await order.horizon()
        }
      }
      const previous = mark
      mark = {
        clock: Math.max(horizon.stamp, previous?.clock ?? 0),
        notification: Math.max(horizon.notification, previous?.notification ?? 0),
        command: Math.max(horizon.command, previous?.command ?? 0)
      }
      for (const [prev, event] of waiting) {
        if (event.order!.stamp <= mark.clock) waiting.delete(prev)
      }
      // What the re-read covers is not known per device.
      floor = mark.clock
    })()
    try {
      await syncing
    } finally {
      syncing = undefined
      syncAgain = false
      settledAt = undefined
    }
    resyncs++
    resolveCaughtUp()
    // A fresh object per resync: streams share their re-reads by event.
    listeners.deliver({ kind: 'resync' })
    drain()
  }

  const onEvent = (event: BusEvent): void => {
    if (closed) return
    if (event.kind === 'resync') {
      resynchronise().catch((error: unknown) => {
        logger.error({ err: error }, 'doorbell could not resynchronise')
        listeners.deliver(event)
      })
      return
    }
    const link = 'order' in event ? event.order : undefined
    if (link === undefined) {
      listeners.deliver(event)
      return
    }
    if (mark !== undefined && link.stamp <= mark.clock) return
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

  const doorbell: OrderedDoorbell = {
    get waiting () {
      return waiting.size
    },
    get resyncs () {
      return resyncs
    },
    mark () {
      return { ...mark! }
    },
    newestFor (kind: MessageKind, deviceId: string) {
      return Math.max(newest.get(kind)?.get(deviceId) ?? 0, floor)
    },
    caughtUp () {
      if (acknowledged <= mark!.clock || closed) return Promise.resolve()
      return new Promise<void>((resolve) => {
        // Capped: a foreign writer stuck mid-transaction must not hold every poll. Past the cap the
        // reader takes the mark as it is and gets the rest live; nothing is lost, only later.
        const timer = setTimeout(resolve, catchUpMs)
        catchUps.push({ stamp: acknowledged, resolve: () => { clearTimeout(timer); resolve() } })
      })
    },
    written (event) {
      const record = event.record
      if (record === undefined) return
      const stamp = event.kind === 'command-update' && 'lastUpdated' in record ? record.lastUpdated : record.stamp
      if (stamp > acknowledged) acknowledged = stamp
    },
    publish: (event: BusEvent, tx?: Store) => inner.publish(event, tx),
    subscribe: (listener) => listeners.add(listener),
    async close () {
      closed = true
      if (checkTimer !== undefined) clearTimeout(checkTimer)
      unsubscribe()
      listeners.clear()
      waiting.clear()
      for (const { resolve } of catchUps.splice(0)) resolve()
      await inner.close()
    }
  }
  return doorbell
}
