/** A cancellation that fires when the client goes away before its (long-poll) answer is sent. */
import type { ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import type { Cancellation } from '../core/realtime/cancellation.js'

const kGone = Symbol('devicehub.clientGone')

type Response = ServerResponse & { [kGone]?: ClientGone }

/** One listener function for every response: `this` is the response that closed. */
function onClose (this: Response): void {
  this[kGone]?.closed()
}

/**
 * One small object per parked poll (thousands may be parked): methods on the prototype, and
 * the socket's `close` hooked with a shared listener (no closure, no `once` wrapper) only while
 * the core listens.
 */
class ClientGone implements Cancellation {
  private gone = false
  private listener: (() => void) | undefined = undefined

  constructor (private readonly raw: Response) {}

  get aborted (): boolean {
    return this.gone || this.raw.destroyed
  }

  addEventListener (_type: 'abort', listener: () => void): void {
    if (this.listener === undefined) this.raw.on('close', onClose)
    this.listener = listener
    this.raw[kGone] = this
  }

  removeEventListener (): void {
    if (this.listener === undefined) return
    this.listener = undefined
    this.raw[kGone] = undefined
    this.raw.off('close', onClose)
  }

  closed (): void {
    const listener = this.listener
    this.removeEventListener()
    if (listener === undefined || this.raw.writableFinished) return
    this.gone = true
    listener()
  }
}

/**
 * Fires when the response's connection closes before the response finished. Lighter than an
 * AbortController (one per parked poll).
 *
 * @example
 * const items = await hub.notifications.poll(request.principal, { deviceId, waitTimeout: 30, signal: clientGone(reply) })
 */
export function clientGone (reply: FastifyReply): Cancellation {
  return new ClientGone(reply.raw)
}
