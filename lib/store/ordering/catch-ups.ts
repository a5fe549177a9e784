/**
 * Readers waiting for the mark to reach this process's own acknowledged writes (`caughtUp()`):
 * a client that wrote and then polls the same instance finds its write in the backlog. The wait
 * is capped: a foreign writer stuck mid-transaction must not hold every poll; past the cap the
 * reader takes the mark as it is and gets the rest live (nothing is lost, only later).
 */
import type { MessageEvent } from '../../core/realtime/bus.js'
import { messageStamp } from '../../core/realtime/message-records.js'

interface CatchUp {
  stamp: number
  resolve(): void
}

export interface CatchUps {
  /** A write of this process committed (it rode its statement). */
  written(event: MessageEvent): void
  /** Resolves once the mark reaches the newest acknowledged write, or after the cap. */
  wait(mark: number): Promise<void>
  /** The mark moved: resolves the readers it covers. */
  reached(mark: number): void
  /** Resolves every reader (closing). */
  releaseAll(): void
}

/**
 * @example
 * const catchUps = createCatchUps(250)
 * await catchUps.wait(bus.mark().clock)
 */
export function createCatchUps (capMs: number): CatchUps {
  /** Newest stamp of a write this process acknowledged. */
  let acknowledged = 0
  let waiting: CatchUp[] = []
  return {
    written (event) {
      const record = event.record
      if (record === undefined) return
      const stamp = messageStamp(event.kind, record)
      if (stamp > acknowledged) acknowledged = stamp
    },
    wait (mark) {
      if (acknowledged <= mark) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, capMs)
        waiting.push({ stamp: acknowledged, resolve: () => { clearTimeout(timer); resolve() } })
      })
    },
    reached (mark) {
      if (waiting.length === 0) return
      let n = 0
      while (n < waiting.length && waiting[n]!.stamp <= mark) waiting[n++]!.resolve()
      if (n > 0) waiting = waiting.slice(n)
    },
    releaseAll () {
      for (const { resolve } of waiting.splice(0)) resolve()
    }
  }
}
