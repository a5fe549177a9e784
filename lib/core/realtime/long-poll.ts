/**
 * The long poll (spec §7.3) as a consumer of the message stream (message-stream.ts): the stream
 * registers in the router, takes the log's mark and reads the backlog after the poll's cursor up to it;
 * the poll answers with that backlog page when it is not empty, else with the first live item
 * (or what a resync found), else `[]` after the wait, when the client goes away or at shutdown.
 * The stream is closed on every exit, which removes its listener; no store connection is held
 * while the poll is parked.
 */
import type { Cancellation } from './cancellation.js'
import type { MessageStream, StreamItem } from './message-stream.js'

export interface LongPollOptions {
  /** Seconds to wait when the backlog is empty (0 = answer with the backlog at once). */
  waitSeconds: number
  /** Ends the wait early with `[]` (the client went away). */
  signal?: Cancellation
}

/**
 * Takes the first batch of `stream` and closes it.
 *
 * @example
 * const stream = await hub.notifications.subscribe(principal, { deviceId: 'd1', after: cursor })
 * const items = await longPoll(stream, { waitSeconds: 30, signal })
 */
export function longPoll<V> (stream: MessageStream<V>, options: LongPollOptions): Promise<V[]> {
  return new Poll(stream, options).promise
}

/**
 * One parked poll as one object: thousands may be parked at once, so it keeps to a few fields;
 * its callbacks (the stream's sink, error and batch hooks; `release` for the timer, the signal
 * and shutdown) are arrow-function fields of the object, not closures of a function scope.
 */
class Poll<V> {
  readonly promise: Promise<V[]>
  private resolve!: (items: V[]) => void
  private reject!: (error: unknown) => void
  private items: V[] = []
  private timer: NodeJS.Timeout | undefined
  private done = false

  constructor (private readonly stream: MessageStream<V>, private readonly options: LongPollOptions) {
    this.promise = new Promise<V[]>((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
    const { signal, waitSeconds } = options
    if (stream.closed || signal?.aborted === true) {
      this.finish()
      return
    }
    // Shutdown (or a revoke) closes the stream: the poll answers with what it has (nothing).
    stream.onClose(this.release)
    if (waitSeconds > 0) {
      this.timer = setTimeout(this.release, waitSeconds * 1000)
      signal?.addEventListener('abort', this.release)
    }
    stream.start(this.take, this.fail, this.batch)
  }

  private readonly take = (item: StreamItem<V>): void => {
    this.items.push(item.item)
  }

  /** A batch was delivered (or nothing is left): answer if anything came, or if there is no wait. */
  private readonly batch = (): void => {
    if (this.items.length > 0 || this.options.waitSeconds <= 0) this.finish()
  }

  private readonly release = (): void => {
    this.finish()
  }

  private readonly fail = (error: unknown): void => {
    if (this.done) return
    this.cleanup()
    this.reject(error)
  }

  private finish (): void {
    if (this.done) return
    this.cleanup()
    this.resolve(this.items)
  }

  private cleanup (): void {
    this.done = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.options.signal?.removeEventListener('abort', this.release)
    // Its close listener (`release`) finds the poll done.
    this.stream.close()
  }
}
