/**
 * Probes for load balancers and Kubernetes: `GET /health` (and `/health/live`) is liveness, 200
 * whenever the process answers HTTP; `GET /health/ready` is readiness, 200 when the store answers,
 * the doorbell is connected and the first-start data exists, 503 otherwise (and while shutting
 * down, so traffic drains). Neither waits for the start (readiness-gate.ts lets them through).
 * Public: probes send no token. Both answer JSON and are never cached.
 */
import { Type } from 'typebox'
import type { DeviceHub } from '../../core/devicehub.js'
import type { App } from '../types.js'

const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('fail')]),
  durationMs: Type.Number(),
  message: Type.Optional(Type.String())
})

const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('fail')]),
  checks: Type.Object({ store: Check, doorbell: Check, shutdown: Check, startup: Check })
})

const Liveness = Type.Object({ status: Type.Literal('ok') })

export function healthRoutes (app: App, hub: DeviceHub): void {
  const live = {
    config: { servedWhileStarting: true },
    schema: { tags: ['health'], summary: 'Liveness: 200 while the process answers', response: { 200: Liveness } }
  }
  const alive = async (_request: unknown, reply: { header(name: string, value: string): unknown }) => {
    reply.header('cache-control', 'no-store')
    return { status: 'ok' as const }
  }
  app.get('/health', live, alive)
  app.get('/health/live', live, alive)
  app.get('/health/ready', {
    config: { servedWhileStarting: true },
    schema: {
      tags: ['health'],
      summary: 'Readiness: 200 when the store answers and the doorbell is connected, else 503',
      response: { 200: Readiness, 503: Readiness }
    }
  }, async (_request, reply) => {
    const report = await hub.health()
    return reply.header('cache-control', 'no-store').code(report.status === 'ok' ? 200 : 503).send(report)
  })
}
