/**
 * Per-route CPU time (`devicehub_http_route_cpu_seconds_total{method,route}`). Node cannot tell
 * which request a CPU microsecond served, so this is a fair-share estimate: at every request
 * start and end the process CPU (user + system, `process.cpuUsage()`) used since the previous
 * such moment is split equally among the requests in flight, and each request is charged the sum
 * of its shares. Over all routes it adds up to the process CPU spent while requests were in
 * flight. Cost: two `process.cpuUsage()` calls (about 1 µs each) and a WeakMap entry per request.
 * A parked long poll is in flight too, so under load poll routes get a share while they wait:
 * compare routes at similar concurrency, or read the non-poll routes.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Registry } from 'prom-client'
import { Counter } from 'prom-client'

/**
 * Adds the hooks and the counter to `app`'s requests.
 *
 * @example
 * installRouteCpu(app, registry)
 */
export function installRouteCpu (app: FastifyInstance, registry: Registry): void {
  const counter = new Counter({
    name: 'devicehub_http_route_cpu_seconds_total',
    help: 'Process CPU time (user + system) charged to HTTP requests by route: the CPU used while requests are in flight, split equally among them',
    labelNames: ['method', 'route'] as const,
    registers: [registry]
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
  const finish = (request: FastifyRequest): void => {
    const start = started.get(request)
    if (start === undefined) return
    started.delete(request)
    advance()
    inFlight--
    counter.inc({ method: request.method, route: request.routeOptions.url ?? 'unmatched' }, (sharePerRequest - start) / 1e6)
  }
  app.addHook('onRequest', (request, _reply, done) => {
    // WebSocket upgrades never finish as HTTP responses: left out, or they would stay in flight.
    if (request.headers.upgrade === undefined) {
      advance()
      inFlight++
      started.set(request, sharePerRequest)
    }
    done()
  })
  app.addHook('onResponse', (request, _reply, done) => {
    finish(request)
    done()
  })
  app.addHook('onRequestAbort', (request, done) => {
    finish(request)
    done()
  })
}

function cpuMicros (): number {
  const { user, system } = process.cpuUsage()
  return user + system
}
