/**
 * Prometheus metrics through prom-client: HTTP requests by route and status with latency
 * histograms and CPU time by route, the event-loop delay, parked long polls, WebSocket sessions and subscriptions (when a source reports
 * them), messages written by kind, store query latency, retention pruning, refused logins and
 * distributed login guessing, and the process metrics. Off by default: `buildServer({ metrics: true })` / `devicehub serve --metrics`.
 */
import type { FastifyInstance } from 'fastify'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { DeviceHub } from '../core/devicehub.js'
import { installEventLoopDelay } from './event-loop-delay.js'
import { installRouteCpu } from './route-cpu.js'

export interface MetricsOptions {
  /** Counts the realtime (WebSocket) layer reports; gauges stay at 0 without them. */
  webSocket?: { sessions(): number, subscriptions(): number }
  /** Counts the MQTT endpoint reports (lib/mqtt); gauges stay at 0 without them. */
  mqtt?: { clients(): number, subscriptions(): number }
  /** Default and process metrics (`process_*`, `nodejs_*`); default true. */
  processMetrics?: boolean
  /**
   * Per-route CPU time (`devicehub_http_route_cpu_seconds_total`, a fair-share estimate: see
   * route-cpu.ts); default true. About two `process.cpuUsage()` calls per request.
   */
  routeCpu?: boolean
}

export interface DeviceHubMetrics {
  readonly registry: Registry
  /** Stops observing the store; the registry stays readable. */
  close(): void
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5]

/** The gauges of the connection endpoints (WebSocket, MQTT), read from their counts at scrape time. */
function installConnectionGauges (registry: Registry, options: MetricsOptions): void {
  new Gauge({
    name: 'devicehub_websocket_sessions',
    help: 'Open WebSocket sessions',
    registers: [registry],
    collect () {
      this.set(options.webSocket?.sessions() ?? 0)
    }
  })
  new Gauge({
    name: 'devicehub_websocket_subscriptions',
    help: 'Active WebSocket subscriptions',
    registers: [registry],
    collect () {
      this.set(options.webSocket?.subscriptions() ?? 0)
    }
  })
  new Gauge({
    name: 'devicehub_mqtt_clients',
    help: 'Connected MQTT clients',
    registers: [registry],
    collect () {
      this.set(options.mqtt?.clients() ?? 0)
    }
  })
  new Gauge({
    name: 'devicehub_mqtt_subscriptions',
    help: 'Active MQTT subscriptions (topic filters and subscribe requests)',
    registers: [registry],
    collect () {
      this.set(options.mqtt?.subscriptions() ?? 0)
    }
  })
}

/**
 * Registers the metrics and the hook that measures every request of `app`.
 *
 * @example
 * const metrics = installMetrics(app, hub)
 * app.get('/metrics', async (_req, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()))
 */
export function installMetrics (app: FastifyInstance, hub: DeviceHub, options: MetricsOptions = {}): DeviceHubMetrics {
  const registry = new Registry()
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry })

  const requests = new Counter({
    name: 'devicehub_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry]
  })
  const duration = new Histogram({
    name: 'devicehub_http_request_duration_seconds',
    help: 'HTTP request latency (long polls included: they last up to their waitTimeout), by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry]
  })
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw URL: ids in paths would explode the label set.
    const route = request.routeOptions.url ?? 'unmatched'
    const labels = { method: request.method, route, status: String(reply.statusCode) }
    requests.inc(labels)
    duration.observe(labels, reply.elapsedTime / 1000)
  })
  if (options.routeCpu !== false) installRouteCpu(app, registry)
  const eventLoopDelay = installEventLoopDelay(registry)

  new Gauge({
    name: 'devicehub_long_polls_parked',
    help: 'Long polls waiting for a command or notification on this instance',
    registers: [registry],
    collect () {
      this.set(hub.stats.parkedPolls)
    }
  })
  installConnectionGauges(registry, options)
  new Counter({
    name: 'devicehub_messages_written_total',
    help: 'Commands, command updates and notifications committed through this instance',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect () {
      // The core keeps plain counters; copy them (they only grow while the process lives).
      this.reset()
      for (const [kind, count] of Object.entries(hub.stats.messagesWritten)) this.inc({ kind }, count)
    }
  })
  new Gauge({
    name: 'devicehub_doorbell_events_waiting',
    help: 'Doorbell events held back until the write drawn before them commits (PostgreSQL)',
    registers: [registry],
    collect () {
      this.set(hub.stats.doorbellOrder.waiting)
    }
  })
  new Counter({
    name: 'devicehub_doorbell_resyncs_total',
    help: 'Times every waiter was told to read again: a write failed after drawing its stamp, or LISTEN reconnected (PostgreSQL)',
    registers: [registry],
    collect () {
      this.reset()
      this.inc(hub.stats.doorbellOrder.resyncs)
    }
  })
  new Counter({
    name: 'devicehub_retention_pruned_rows_total',
    help: 'Commands and notifications deleted by the retention pruner',
    registers: [registry],
    collect () {
      this.reset()
      this.inc(hub.stats.retention.prunedRows)
    }
  })
  new Counter({
    name: 'devicehub_retention_passes_total',
    help: 'Retention pruning passes, by result',
    labelNames: ['result'] as const,
    registers: [registry],
    collect () {
      this.reset()
      this.inc({ result: 'ok' }, hub.stats.retention.passes)
      this.inc({ result: 'failed' }, hub.stats.retention.failures)
    }
  })
  new Counter({
    name: 'devicehub_login_failures_total',
    help: 'Refused logins (POST /token, WebSocket token), by reason: invalid (wrong password or unknown login), ' +
      'throttled (429), inactive (right password, locked or disabled user)',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const [reason, count] of Object.entries(hub.stats.logins.failures)) this.inc({ reason }, count)
    }
  })
  new Counter({
    name: 'devicehub_login_guessing_alerts_total',
    help: 'Distributed login guessing: times failures for one login came from many client addresses within a window',
    registers: [registry],
    collect () {
      this.reset()
      this.inc(hub.stats.logins.guessingAlerts)
    }
  })
  new Gauge({
    name: 'devicehub_logins_under_guessing',
    help: 'Logins with a distributed-guessing alert within the last window',
    registers: [registry],
    collect () {
      this.set(hub.stats.logins.loginsUnderGuessing)
    }
  })
  const queries = new Histogram({
    name: 'devicehub_store_query_duration_seconds',
    help: 'Store query latency (completed queries), by operation',
    labelNames: ['operation'] as const,
    buckets: QUERY_BUCKETS,
    registers: [registry]
  })
  const stopObserving = hub.store.observeQueries?.(({ operation, seconds }) => queries.observe({ operation }, seconds))
  return {
    registry,
    close () {
      stopObserving?.()
      eventLoopDelay.close()
    }
  }
}
