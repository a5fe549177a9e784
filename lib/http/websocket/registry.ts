/**
 * Every open WebSocket session of one Fastify server, whichever route accepted it: one ping
 * timer for all of them, counts for metrics, closing them all when the server stops, and the
 * subscription ids. The Fastify instance owns it (a decorator, set where the WebSocket server is
 * set up), so the standalone routes, the routes of an embedded plugin and other modules on the
 * same WebSocket server share one registry, and two servers in one process share nothing.
 */
import type { FastifyInstance } from 'fastify'

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
  /** A new subscription id: unique here, positive, safe: epoch ms x 1000 + a counter, as DeviceHive does (§6.5). */
  nextSubscriptionId(): number
}

/** Ping interval of auth spec §6.7. */
export const PING_INTERVAL_MS = 30_000

const DECORATOR = 'devicehubWebSocketSessions'

/**
 * The registry of the sessions on `instance`'s server: the one an enclosing context holds, else
 * a new one decorating `instance` (which must not have started yet).
 *
 * @example
 * const { sessions, subscriptions } = webSocketRegistry(app)
 */
export function webSocketRegistry (instance: FastifyInstance, pingIntervalMs = PING_INTERVAL_MS): WebSocketRegistry {
  if (instance.hasDecorator(DECORATOR)) return instance.getDecorator<WebSocketRegistry>(DECORATOR)
  const registry = createWebSocketRegistry(pingIntervalMs)
  instance.decorate(DECORATOR, registry)
  return registry
}

export function createWebSocketRegistry (pingIntervalMs = PING_INTERVAL_MS): WebSocketRegistry {
  const open = new Set<RegisteredSession>()
  let timer: NodeJS.Timeout | undefined
  let lastSubscriptionId = 0
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
    },
    nextSubscriptionId () {
      lastSubscriptionId = Math.max(lastSubscriptionId + 1, Date.now() * 1000)
      return lastSubscriptionId
    }
  }
}
