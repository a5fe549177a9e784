/** An AbortSignal that fires when the client goes away before its (long-poll) answer is sent. */
import type { FastifyReply } from 'fastify'

/**
 * Aborts when the response's connection closes before the response finished; the listener is
 * removed once the answer has been sent, so nothing outlives the request.
 *
 * @example
 * const items = await hub.notifications.poll(request.principal, { ...request.query, signal: clientGone(reply) })
 */
export function clientGone (reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  const raw = reply.raw
  const onClose = (): void => {
    if (!raw.writableFinished) controller.abort()
  }
  raw.once('close', onClose)
  raw.once('finish', () => raw.off('close', onClose))
  return controller.signal
}
