/**
 * What message streams ask of a doorbell that keeps a mark (ordered-doorbell.ts): the mark to read
 * up to, and whether a one-device stream has anything to read at all. Shared by the command and
 * notification streams.
 */
import type { HighWater } from '../commands/command-ports.js'
import type { Doorbell } from './doorbell.js'

/**
 * The doorbell's mark as a stream's high-water mark (ids of `kind`), once this process's own
 * writes are in it; undefined when the doorbell keeps none (read the store's instead).
 */
export async function doorbellHighWater (doorbell: Doorbell, kind: 'notification' | 'command'): Promise<HighWater | undefined> {
  if (doorbell.mark === undefined) return undefined
  await doorbell.caughtUp?.()
  const mark = doorbell.mark()!
  return { id: mark[kind], clock: mark.clock }
}

type StreamKind = 'notification' | 'command' | 'command-update'

/** Whether nothing of `kind` was released for the stream's one device after `after` (see `Doorbell.newestFor`). */
export function quietAfter (doorbell: Doorbell, kind: StreamKind, deviceIds: readonly string[] | undefined, after: number): boolean {
  if (deviceIds?.length !== 1 || doorbell.newestFor === undefined) return false
  return doorbell.newestFor(kind, deviceIds[0]!) <= after
}
