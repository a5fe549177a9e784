/**
 * Per-route CPU time (`devicehub_http_route_cpu_seconds_total{method,route}`). Node cannot tell
 * which request a CPU microsecond served, so this is a fair-share estimate: at every request
 * start and end the process CPU (user + system, `process.cpuUsage()`) used since the previous
 * such moment is split equally among the requests in flight, and each request is charged the sum
 * of its shares. Over all routes it adds up to the process CPU spent while requests were in
 * flight. Cost: two `process.cpuUsage()` calls (about 1 µs each), a WeakMap entry and an addition
 * per request, and three route-level hooks (onRequest, onResponse, onRequestAbort).
 * A parked long poll is in flight too, so under load poll routes get a share while they wait:
 * compare routes at similar concurrency, or read the non-poll routes.
 */
import type { FastifyInstance, FastifyRequest, onRequestAbortHookHandler, onRequestHookHandler, onResponseHookHandler } from 'fastify'
import type { Registry } from 'prom-client'
import { Counter } from 'prom-client'
import { routeHooks } from './route-hooks.js'

/**
 * Adds the hooks and the counter to `app`'s requests.
 *
 * @example
 * installRouteCpu(app, registry)
 */
export function installRouteCpu (app: FastifyInstance, registry: Registry): void {
  // Plain numbers per route and method, copied into the counter at scrape time: a labelled
  // prom-client inc() per request (label hashing) would cost more than the measuring itself.
  const charged: Array<{ method: string, route: string, micros: number }> = []
  new Counter({
    name: 'devicehub_http_route_cpu_seconds_total',
    help: 'Process CPU time (user + system) charged to HTTP requests by route: ' +
      'the CPU used while requests are in flight, split equally among them',
    labelNames: ['method', 'route'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const { method, route, micros } of charged) if (micros > 0) this.inc({ method, route }, micros / 1e6)
    }
  })
  let inFlight = 0
  let lastCpuMicros = cpuMicros()
  // CPU µs per in-flight request, summed since the process started: a request's charge is the
  // difference between its end and its start.
  let sharePerRequest = 0
  const started = new WeakMap<FastifyRequest, number>()
  const advance = (): void => {
    const now = cpuMicros()
    if (inFlight > 0) sharePerRequest += (now - lastCpuMicros) / inFlight
    lastCpuMicros = now
  }
  const start: onRequestHookHandler = (request, _reply, done) => {
    advance()
    inFlight++
    started.set(request, sharePerRequest)
    done()
  }
  // The hooks are the route's own, added when the route is declared: the route pattern is known
  // there, so no request reads `request.routeOptions` (a getter that builds an object per call).
  app.addHook('onRoute', (route) => {
    // WebSocket upgrades never finish as HTTP responses: left out, or they would stay in flight.
    if ((route as { websocket?: boolean }).websocket === true) return
    const entries = new Map<string, { method: string, route: string, micros: number }>()
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      const entry = { method, route: route.url, micros: 0 }
      entries.set(method, entry)
      charged.push(entry)
    }
    const finish = (request: FastifyRequest): void => {
      const begun = started.get(request)
      if (begun === undefined) return
      started.delete(request)
      advance()
      inFlight--
      const entry = entries.get(request.method)
      if (entry !== undefined) entry.micros += sharePerRequest - begun
    }
    const end: onResponseHookHandler = (request, _reply, done) => {
      finish(request)
      done()
    }
    const abort: onRequestAbortHookHandler = (request, done) => {
      finish(request)
      done()
    }
    route.onRequest = [start, ...routeHooks(route.onRequest)]
    route.onResponse = [...routeHooks(route.onResponse), end]
    route.onRequestAbort = [...routeHooks(route.onRequestAbort), abort]
  })
}

function cpuMicros (): number {
  const { user, system } = process.cpuUsage()
  return user + system
}
