/** A cancellation that fires when the client goes away before its (long-poll) answer is sent. */
import type { FastifyReply } from 'fastify'
import type { Cancellation } from '../core/realtime/cancellation.js'

/**
 * Fires when the response's connection closes before the response finished. Lighter than an
 * AbortController (one per parked poll): it only hooks the socket's `close` while the core
 * listens.
 *
 * @example
 * const items = await hub.notifications.poll(request.principal, { ...request.query, signal: clientGone(reply) })
 */
export function clientGone (reply: FastifyReply): Cancellation {
  const raw = reply.raw
  let aborted = false
  let onClose: (() => void) | undefined
  return {
    get aborted () {
      return aborted || raw.destroyed
    },
    addEventListener (_type, listener) {
      onClose = () => {
        if (raw.writableFinished) return
        aborted = true
        listener()
      }
      raw.once('close', onClose)
    },
    removeEventListener () {
      if (onClose !== undefined) raw.off('close', onClose)
      onClose = undefined
    }
  }
}
