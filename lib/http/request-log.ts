/**
 * One log line per request: Fastify's default logs "incoming request" and "request completed";
 * this keeps only the second and puts the method and URL on it.
 */
import { LogController } from 'fastify'
import type { FastifyReply, FastifyRequest } from 'fastify'

export class OneLinePerRequest extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored')
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
