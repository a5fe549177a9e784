/**
 * Nothing is answered before the hub is initialised (issue #22). `startServer()` listens before
 * it creates the first-start data (a start that fails on a busy port must create no admin whose
 * generated password nobody saw), so a request can arrive before the admin exists: it waits
 * here for the initialisation, at most `waitMs`, then gets 503 with `Retry-After`, never a wrong
 * answer. Routes marked `servedWhileStarting` (the health probes) pass at once. WebSocket
 * upgrades go through the same hook, so they wait (or are refused with 503) too.
 */
import type { FastifyInstance } from 'fastify'
import type { DeviceHub } from '../core/devicehub.js'
import { sendError } from './error-handler.js'

/** How long a request waits for the start before it gets 503 (default). */
export const DEFAULT_STARTUP_WAIT_MS = 10_000
export const STARTING_MESSAGE = 'The server is starting. Retry in 1 s'

/** Resolves true once the hub is initialised, false after `waitMs` or when its start failed (HTTP and MQTT). */
export async function initialisedWithin (hub: DeviceHub, waitMs: number): Promise<boolean> {
  if (hub.initialised) return true
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), waitMs)
  })
  try {
    return await Promise.race([hub.whenInitialised().then(() => true, () => false), expired])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Adds the gate to `instance` (encapsulated: its routes and children only). Add it before the
 * auth hook: a token cannot be checked against users that do not exist yet.
 *
 * @example
 * installReadinessGate(instance, hub)
 * installAuthHook(instance, hub)
 */
export function installReadinessGate (instance: FastifyInstance, hub: DeviceHub, waitMs = DEFAULT_STARTUP_WAIT_MS): void {
  // A callback hook: once the hub is up (every request but the first few), it passes without a
  // promise. A hook that answers itself does not call done().
  instance.addHook('onRequest', (request, reply, done) => {
    if (hub.initialised || request.routeOptions.config.servedWhileStarting === true) {
      done()
      return
    }
    initialisedWithin(hub, waitMs).then((ready) => {
      if (ready) {
        done()
        return
      }
      reply.header('retry-after', '1')
      sendError(reply, 503, STARTING_MESSAGE)
    }, done)
  })
}
