/**
 * The in-order queue of one connection's inbound frames (WebSocket API, plugin proxy, any
 * endpoint added later). Total: a frame's work that throws or rejects goes to `onError` of that
 * connection, and the queue's own promise never rejects, so no frame can end the process.
 * Bounded: a client may pipeline frames without waiting for replies, but reading from its
 * socket pauses while much is queued, and a connection that still queues more than
 * `maxPending` frames (all arrived in one read) is handed to `onOverflow` (closed).
 */

export interface FrameQueueOptions {
  /** Frames waiting or running before the connection overflows (default {@link DEFAULT_MAX_PENDING_FRAMES}). */
  maxPending?: number
  /** Reading pauses while this many frames are queued (default a tenth of `maxPending`, at least 1). */
  pauseAtFrames?: number
  /** Reading pauses while this many bytes are queued (default {@link DEFAULT_PAUSE_AT_BYTES}). */
  pauseAtBytes?: number
  /** Called once when one frame too many is queued; the frame is dropped. Should close the connection. */
  onOverflow(): void
  /** A frame's work threw: answer or close this one connection (an exception here is swallowed). */
  onError(error: unknown): void
  /** Stop and restart reading from the connection (backpressure); optional. */
  pause?(): void
  resume?(): void
}

export interface FrameQueue {
  /** Queues `run` after the frames before it; false when the queue overflowed (the frame is dropped). */
  push(bytes: number, run: () => Promise<void> | void): boolean
  /** Frames waiting or running. */
  readonly pending: number
  /** Resolves when every frame queued so far is done; never rejects. */
  idle(): Promise<void>
}

export const DEFAULT_MAX_PENDING_FRAMES = 1000
export const DEFAULT_PAUSE_AT_BYTES = 1024 * 1024

/**
 * @example
 * const queue = createFrameQueue({ onOverflow: () => socket.close(1008, 'Too many pending messages'), onError: () => socket.terminate() })
 * socket.on('message', (data) => queue.push(data.length, () => handle(data)))
 */
export function createFrameQueue (options: FrameQueueOptions): FrameQueue {
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING_FRAMES
  const pauseAtFrames = options.pauseAtFrames ?? Math.max(1, Math.floor(maxPending / 10))
  const pauseAtBytes = options.pauseAtBytes ?? DEFAULT_PAUSE_AT_BYTES
  let tail: Promise<void> = Promise.resolve()
  let pending = 0
  let pendingBytes = 0
  let paused = false
  let overflowed = false

  const guard = (f: (() => void) | undefined): void => {
    try {
      f?.()
    } catch {
      // Nothing more can be done for this connection here; the queue itself stays total.
    }
  }

  const run = async (bytes: number, work: () => Promise<void> | void): Promise<void> => {
    try {
      await work()
    } catch (error) {
      guard(() => options.onError(error))
    } finally {
      pending--
      pendingBytes -= bytes
      if (paused && pending < pauseAtFrames && pendingBytes < pauseAtBytes) {
        paused = false
        guard(options.resume)
      }
    }
  }

  return {
    push (bytes, work) {
      if (overflowed) return false
      if (pending >= maxPending) {
        overflowed = true
        guard(options.onOverflow)
        return false
      }
      pending++
      pendingBytes += bytes
      if (!paused && (pending >= pauseAtFrames || pendingBytes >= pauseAtBytes)) {
        paused = true
        guard(options.pause)
      }
      tail = tail.then(async () => run(bytes, work))
      return true
    },
    get pending () {
      return pending
    },
    async idle () {
      await tail
    }
  }
}
