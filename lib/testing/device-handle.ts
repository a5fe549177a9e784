/**
 * A device of the test rig: its own device-scoped token and URLs (for the firmware under test),
 * and the assertions a test makes about it: send a command and wait for the firmware's answer,
 * expect a notification (including ones that arrived before the call).
 */
import type { JsonObject } from '../core/ports.js'
import { createRestClient } from '../client/rest-client.js'
import type { CommandView, NotificationView, RestClient } from '../client/rest-client.js'
import { describeMatcher, matches } from './match.js'
import type { NotificationMatcher } from './match.js'
import { createNotificationFeed } from './notification-feed.js'

export interface DeviceHandle {
  readonly id: string
  readonly networkId: number
  readonly deviceTypeId: number
  /** The device's own tokens: its actions only, its network and device type only. */
  readonly accessToken: string
  readonly refreshToken: string
  readonly urls: {
    /** REST base URL. */
    readonly rest: string
    readonly webSocket: string
    /** The device's command long poll (add `?timestamp=` and `&waitTimeout=`). */
    readonly commandPoll: string
    /** Where the device posts notifications. */
    readonly notification: string
  }
  /** A REST client holding the device's token: what firmware would do. */
  readonly client: RestClient
  /** Server time just before the device was registered: the start of its feed. */
  readonly since: string
  /**
   * Sends a command (as the admin) and resolves with it once the device has updated it, or
   * rejects naming the device, the command and the time waited.
   */
  command(name: string, parameters?: JsonObject, options?: { timeout?: number, lifetime?: number }): Promise<CommandView>
  /**
   * Resolves with the first notification since registration that matches and was not returned
   * by an earlier call, whether it arrived before or after this call; rejects after `timeout` ms.
   */
  expectNotification(matcher: NotificationMatcher, options?: { timeout?: number }): Promise<NotificationView>
  /** Every notification since registration, in order, then each new one as it arrives. */
  notifications(options?: { signal?: AbortSignal }): AsyncIterableIterator<NotificationView>
  /** Sends a notification as the device. */
  notify(name: string, parameters?: JsonObject): Promise<{ id: number, timestamp: string }>
  /** Stops the background feed (the rig does it on close). */
  close(): Promise<void>
}

export interface DeviceHandleOptions {
  id: string
  since: string
  tokens: { accessToken: string, refreshToken: string }
  networkId: number
  deviceTypeId: number
  admin: RestClient
  url: string
  webSocketUrl: string
  /**
   * A simulated device's own acknowledgement of its update (`SimulatedDevice.whenAnswered`):
   * `command()` resolves only once the device has it too, within the same timeout.
   */
  answered?(commandId: number, signal: AbortSignal): Promise<void>
}

const DEFAULT_TIMEOUT_MS = 5000

export function createDeviceHandle (options: DeviceHandleOptions): DeviceHandle {
  const { id, admin } = options
  const client = createRestClient({ url: options.url, ...options.tokens })
  const feed = createNotificationFeed(admin, id, options.since)
  const claimed = new Set<number>()
  const path = `${options.url}/device/${encodeURIComponent(id)}`

  async function command (name: string, parameters?: JsonObject, o: { timeout?: number, lifetime?: number } = {}): Promise<CommandView> {
    const timeout = o.timeout ?? DEFAULT_TIMEOUT_MS
    const started = Date.now()
    const inserted = await admin.sendCommand(id, { command: name, parameters, lifetime: o.lifetime })
    const deadline = AbortSignal.timeout(Math.max(1, timeout - (Date.now() - started)))
    try {
      for (;;) {
        const remaining = timeout - (Date.now() - started)
        if (remaining <= 0) break
        const updated = await admin.waitForUpdate(
          id, inserted.id, { waitTimeout: Math.min(60, Math.ceil(remaining / 1000)), signal: deadline }
        )
        if (updated === null) continue
        // The update committed; the device's answer to its own request may still be on its way.
        await options.answered?.(updated.id, deadline)
        return updated
      }
    } catch (error) {
      if (!deadline.aborted) throw error
    }
    throw new Error(`device '${id}' did not answer command '${name}' (id ${inserted.id}) within ${timeout} ms`)
  }

  async function expectNotification (matcher: NotificationMatcher, o: { timeout?: number } = {}): Promise<NotificationView> {
    const timeout = o.timeout ?? DEFAULT_TIMEOUT_MS
    const deadline = AbortSignal.timeout(timeout)
    let seen = 0
    for (;;) {
      for (; seen < feed.items.length; seen++) {
        const item = feed.items[seen]!
        if (!claimed.has(item.id) && matches(matcher, item)) {
          claimed.add(item.id)
          return item
        }
      }
      try {
        await feed.next(seen, deadline)
      } catch {
        const names = feed.items.map((n) => n.notification).join(', ')
        throw new Error(`device '${id}' sent no notification ${describeMatcher(matcher)} within ${timeout} ms` +
          ` (received ${feed.items.length}${names === '' ? '' : `: ${names}`})`)
      }
    }
  }

  async function * notifications (o: { signal?: AbortSignal } = {}): AsyncIterableIterator<NotificationView> {
    const signal = o.signal ?? new AbortController().signal
    for (let i = 0; ; i++) {
      if (i >= feed.items.length) {
        try {
          await feed.next(i, signal)
        } catch {
          return
        }
      }
      yield feed.items[i]!
    }
  }

  return {
    id,
    networkId: options.networkId,
    deviceTypeId: options.deviceTypeId,
    accessToken: options.tokens.accessToken,
    refreshToken: options.tokens.refreshToken,
    urls: { rest: options.url, webSocket: options.webSocketUrl, commandPoll: `${path}/command/poll`, notification: `${path}/notification` },
    client,
    since: options.since,
    command,
    expectNotification,
    notifications,
    notify: (name, parameters) => client.sendNotification(id, { notification: name, parameters }),
    close: () => feed.close()
  }
}
