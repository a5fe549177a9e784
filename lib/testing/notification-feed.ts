/**
 * Every notification of one device since a cursor, in order, fetched by one background long
 * poll that re-polls from the last cursor it received: nothing is missed, however late a test
 * starts to look. Started on first use, stopped by `close()`.
 */
import type { NotificationView, RestClient } from '../client/rest-client.js'

export interface NotificationFeed {
  /** Everything received so far, in server order. */
  readonly items: readonly NotificationView[]
  /** Resolves when `items` grows past `length`, or rejects when `signal` aborts or the feed closes. */
  next(length: number, signal: AbortSignal): Promise<void>
  close(): Promise<void>
}

export function createNotificationFeed (client: RestClient, deviceId: string, since: string): NotificationFeed {
  const items: NotificationView[] = []
  const controller = new AbortController()
  const wakers = new Set<() => void>()
  let loop: Promise<void> | undefined
  let failure: unknown

  async function run (): Promise<void> {
    let cursor = since
    while (!controller.signal.aborted) {
      try {
        const batch = await client.pollNotifications(deviceId, { timestamp: cursor, waitTimeout: 30, signal: controller.signal })
        if (batch.length === 0) continue
        items.push(...batch)
        cursor = batch[batch.length - 1]!.timestamp
      } catch (error) {
        if (controller.signal.aborted) break
        // A fault the test injected (refused connection, 5xx): try again from the same cursor.
        failure = error
        await new Promise((resolve) => setTimeout(resolve, 50).unref())
        continue
      }
      for (const wake of [...wakers]) wake()
    }
    for (const wake of [...wakers]) wake()
  }

  return {
    items,
    next (length, signal) {
      loop ??= run()
      if (items.length > length) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const done = (): void => {
          wakers.delete(wake)
          signal.removeEventListener('abort', done)
          if (items.length > length) resolve()
          else reject(controller.signal.aborted ? new Error('the test rig is closed') : signal.reason ?? failure)
        }
        const wake = (): void => { if (items.length > length || controller.signal.aborted) done() }
        wakers.add(wake)
        signal.addEventListener('abort', done, { once: true })
      })
    },
    async close () {
      controller.abort()
      await loop
    }
  }
}
