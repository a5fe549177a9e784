/**
 * The long-poll waiter (spec §7.3): subscribe first, then read the backlog; if it is empty,
 * wait for the first matching doorbell, the timeout, the client going away or shutdown. No
 * store connection is held while waiting, and every exit removes the listener and the timer.
 */
import type { HighWater } from '../commands/command-ports.js'
import type { Hub, HubEvent } from './hub.js'

export interface LongPollSpec<T> {
  hub: Hub
  /** Seconds to wait when the backlog is empty (0 = answer at once). */
  waitSeconds: number
  /** Ends the wait early with `[]`: client disconnect, shutdown. */
  signals: ReadonlyArray<AbortSignal | undefined>
  /** Cheap check on the doorbell's routing keys, before any read. */
  routes(event: HubEvent): boolean
  highWater(): Promise<HighWater>
  /** The backlog, given where the store stood at subscribe time; `null` = answer `[]` now, no wait. */
  backlog(mark: HighWater): Promise<T[] | null>
  /** The item a doorbell names (shared between waiters); undefined when gone. */
  load(event: HubEvent): Promise<T | undefined>
  /** Full check of a live item: filters, scope, and that it is new for this waiter. */
  accepts(item: T, mark: HighWater): boolean
}

/**
 * Runs one long poll and resolves with the backlog, one live item, or `[]`.
 *
 * @example
 * const items = await longPoll({ hub, waitSeconds: 30, signals: [signal], routes, highWater, backlog, load, accepts })
 */
export async function longPoll<T> (spec: LongPollSpec<T>): Promise<T[]> {
  if (spec.signals.some((s) => s?.aborted === true)) return []
  if (spec.waitSeconds <= 0) return (await spec.backlog(await spec.highWater())) ?? []

  // Doorbells that ring while the backlog is read are kept, in order, with their reads started.
  const queue: Array<Promise<T | undefined>> = []
  let wake: (() => void) | undefined
  const unsubscribe = spec.hub.subscribe((event) => {
    if (!spec.routes(event)) return
    const read = spec.load(event)
    read.catch(() => undefined)
    queue.push(read)
    wake?.()
  })
  let timer: NodeJS.Timeout | undefined
  const cleanups: Array<() => void> = [unsubscribe]
  try {
    const mark = await spec.highWater()
    const backlog = await spec.backlog(mark)
    if (backlog === null) return []
    if (backlog.length > 0) return backlog
    return await new Promise<T[]>((resolve, reject) => {
      let done = false
      const finish = (items: T[]): void => {
        if (done) return
        done = true
        resolve(items)
      }
      timer = setTimeout(() => finish([]), spec.waitSeconds * 1000)
      for (const signal of spec.signals) {
        if (signal === undefined) continue
        const onAbort = (): void => finish([])
        signal.addEventListener('abort', onAbort, { once: true })
        cleanups.push(() => signal.removeEventListener('abort', onAbort))
        if (signal.aborted) finish([])
      }
      let draining = false
      const drain = async (): Promise<void> => {
        if (draining) return
        draining = true
        try {
          while (!done && queue.length > 0) {
            const item = await queue.shift()!
            if (item !== undefined && spec.accepts(item, mark)) finish([item])
          }
        } catch (error) {
          if (!done) {
            done = true
            reject(error)
          }
        } finally {
          draining = false
        }
      }
      wake = () => { void drain() }
      void drain()
    })
  } finally {
    if (timer !== undefined) clearTimeout(timer)
    for (const cleanup of cleanups) cleanup()
  }
}
