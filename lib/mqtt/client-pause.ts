/**
 * Pausing an aedes 1.2 client without stalling it. aedes reads the next chunk from the
 * connection once every packet of the current batch has been handled: each handled packet calls
 * `_nextBatch`, which counts it off. While the client is paused `_nextBatch` returns before it
 * counts, and `resume()` counts only one: a client paused while several packets were in hand
 * never reads again (no PUBACK, no PINGRESP). Only aedes' own pause during CONNECT, with one
 * packet in hand, is safe. Here the packets handled while paused are counted off on resume.
 */
import type { Client } from 'aedes'

interface BatchedClient {
  _paused: boolean
  _nextBatch: (error?: Error | null) => void
}

/** Pause and resume for `client` that keep its read loop going (see above). */
export interface ClientPause {
  pause(): void
  resume(): void
}

/** Whether `client` has the aedes internals {@link pausableClient} works with. */
function isBatched (client: object): boolean {
  const batched = client as Partial<BatchedClient>
  return typeof batched._nextBatch === 'function' && typeof batched._paused === 'boolean'
}

/**
 * Whether pausing a client works; when it does not (an aedes whose internals changed), says so
 * once through `logger`: requests then queue up to their cap without slowing the client's reads.
 * One check per server: it remembers whether it warned.
 *
 * @example
 * const checkPausable = createPauseCheck(app.log)
 * checkPausable(broker.handle(socket))
 */
export function createPauseCheck (logger: { warn(message: string): void }): (client: Client) => boolean {
  let warned = false
  return (client) => {
    if (isBatched(client)) return true
    if (!warned) {
      warned = true
      logger.warn('mqtt: clients are not paused while their requests queue (unexpected aedes client internals)')
    }
    return false
  }
}

/**
 * Install before the client's packets after CONNECT are handled (aedes reads `_nextBatch` per
 * packet). Where the client lacks the internals this was written for, pausing does nothing: reading
 * goes on and the request queue's cap still bounds it ({@link createPauseCheck} has warned of it).
 *
 * @example
 * const gate = pausableClient(client)
 * gate.pause(); ... ; gate.resume()
 */
export function pausableClient (client: Client): ClientPause {
  const batched = client as unknown as BatchedClient
  if (!isBatched(client)) return { pause: () => {}, resume: () => {} }
  const nextBatch = batched._nextBatch
  let held = 0
  batched._nextBatch = (error) => {
    if (batched._paused && (error === undefined || error === null)) {
      held++
      return
    }
    nextBatch(error)
  }
  return {
    pause () {
      batched._paused = true
    },
    resume () {
      if (!batched._paused) return
      batched._paused = false
      // Count off every packet handled while paused; with none, one call reads what waits.
      const calls = Math.max(held, 1)
      held = 0
      for (let i = 0; i < calls; i++) nextBatch()
    }
  }
}
