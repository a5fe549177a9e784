/**
 * Every open WebSocket session of one hub, whichever route accepted it: one ping timer for all
 * of them, counts for metrics, and closing them all when the server stops. Kept per hub (a
 * WeakMap), so the standalone routes, the routes of an embedded plugin and other modules on the
 * same WebSocket server (the plugin proxy) share one registry.
 */
import type { DeviceHub } from '../../core/devicehub.js'

/** What the registry needs of a session. */
export interface RegisteredSession {
  /** Subscriptions the session holds now. */
  readonly subscriptionCount: number
  /** Sends a ping frame (or closes a dead connection). */
  ping(): void
  /** Closes the connection with `code` and releases everything. */
  close(code: number, reason: string): void
}

export interface WebSocketRegistry {
  /** Open sessions (Prometheus: devicehub_websocket_sessions). */
  readonly sessions: number
  /** Subscriptions over all open sessions (Prometheus: devicehub_websocket_subscriptions). */
  readonly subscriptions: number
  add(session: RegisteredSession): void
  remove(session: RegisteredSession): void
  /** Closes every session (server shutdown, close code 1001). */
  closeAll(): void
}

/** Ping interval of auth spec §6.7. */
export const PING_INTERVAL_MS = 30_000

const registries = new WeakMap<DeviceHub, WebSocketRegistry>()

/**
 * The registry of `hub`'s sessions (created on first use).
 *
 * @example
 * const { sessions, subscriptions } = webSocketRegistry(hub)
 */
export function webSocketRegistry (hub: DeviceHub, pingIntervalMs = PING_INTERVAL_MS): WebSocketRegistry {
  let registry = registries.get(hub)
  if (registry === undefined) {
    registry = createWebSocketRegistry(pingIntervalMs)
    registries.set(hub, registry)
  }
  return registry
}

export function createWebSocketRegistry (pingIntervalMs = PING_INTERVAL_MS): WebSocketRegistry {
  const open = new Set<RegisteredSession>()
  let timer: NodeJS.Timeout | undefined
  const pingAll = (): void => {
    for (const session of open) session.ping()
  }
  return {
    get sessions () {
      return open.size
    },
    get subscriptions () {
      let total = 0
      for (const session of open) total += session.subscriptionCount
      return total
    },
    add (session) {
      open.add(session)
      if (timer === undefined) {
        timer = setInterval(pingAll, pingIntervalMs)
        timer.unref()
      }
    },
    remove (session) {
      open.delete(session)
      if (open.size === 0 && timer !== undefined) {
        clearInterval(timer)
        timer = undefined
      }
    },
    closeAll () {
      for (const session of [...open]) session.close(1001, 'Server shutting down')
    }
  }
}
