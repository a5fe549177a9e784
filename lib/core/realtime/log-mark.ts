/**
 * What message streams ask of the message log's mark: the mark to read up to, and whether a
 * one-device stream has anything to read at all. Shared by the command and notification streams.
 */
import type { HighWater } from '../commands/command-ports.js'
import type { MessageKind } from './bus.js'
import type { MessageLog } from './message-log.js'

/**
 * The log's mark as a stream's high-water mark (ids of `kind`), once this process's own writes
 * are in it; undefined when the log keeps none (read the store's instead).
 */
export async function logHighWater (log: MessageLog, kind: 'notification' | 'command'): Promise<HighWater | undefined> {
  await log.caughtUp()
  const mark = log.markNow()
  return mark === undefined ? undefined : { id: mark[kind], clock: mark.clock }
}

/** Whether nothing of `kind` was released for the stream's one device after `after` (see `MessageLog.newestFor`). */
export function quietAfter (log: MessageLog, kind: MessageKind, deviceIds: readonly string[] | undefined, after: number): boolean {
  if (deviceIds?.length !== 1) return false
  return log.newestFor(kind, deviceIds[0]!) <= after
}
