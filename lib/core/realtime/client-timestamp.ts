/**
 * What becomes of a `timestamp` a client sends with a command or notification (issue #23).
 *
 * An item's `timestamp` is its place in the server's order: the poll and subscription cursor
 * (`clock_ts`). The stamp is drawn from the message clock, strictly after every stamp before
 * it, so a client that re-polls with the last `timestamp` it received gets every later item
 * once and never an earlier one again, whatever timestamps clients sent.
 *
 * DeviceHive stores a client's timestamp as given, and its tests send `new Date()` and expect
 * that instant back. So a client's timestamp is used as the clock's reading when it is no later
 * than the server's time and at most {@link CLIENT_TIMESTAMP_WINDOW_MS} earlier (the client's
 * clock a little behind, the time the request took): the item keeps it exactly unless another
 * item was stamped at or after it, then it gets the next free millisecond. Any other client
 * timestamp (1970, 2000, 9999, a clock far off) is replaced by the server's time.
 */

/** How far behind the server's time a client's timestamp may be and still be kept. */
export const CLIENT_TIMESTAMP_WINDOW_MS = 1_000

/**
 * The clock reading for an item: the client's timestamp when it is within the window, else `now`.
 *
 * @example
 * clockReading(undefined, 5_000) // 5000
 * clockReading(4_990, 5_000)     // 4990 (kept: 10 ms behind)
 * clockReading(0, 5_000)         // 5000 (1970: replaced)
 */
export function clockReading (clientTimestamp: number | null | undefined, now: number): number {
  if (clientTimestamp === undefined || clientTimestamp === null) return now
  return clientTimestamp <= now && clientTimestamp >= now - CLIENT_TIMESTAMP_WINDOW_MS ? clientTimestamp : now
}

/**
 * One reading for a batch drawn in one clock step: the earliest, so every stamp of the batch is
 * at or after each kept client timestamp's reading and none is before the window.
 *
 * @example
 * batchClockReading([{ timestamp: 4_990 }, {}], 5_000) // 4990
 */
export function batchClockReading (items: ReadonlyArray<{ timestamp?: number | null }>, now: number): number {
  let reading = now
  for (const item of items) reading = Math.min(reading, clockReading(item.timestamp, now))
  return reading
}
