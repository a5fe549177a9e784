/**
 * The event-loop delay as a cumulative Prometheus histogram (`devicehub_event_loop_delay_seconds`)
 * and the largest delay since the previous scrape (`devicehub_event_loop_delay_max_seconds`), from
 * `perf_hooks.monitorEventLoopDelay`. prom-client's defaults (`nodejs_eventloop_lag_*`) are gauges
 * reset at every scrape and present only with the process metrics; a histogram adds up across
 * scrapes and instances, so `histogram_quantile(0.99, rate(..._bucket[5m]))` gives the p99 over
 * any window, and a stall between two scrapes is never lost.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { Registry } from 'prom-client'
import { Gauge, Histogram } from 'prom-client'

/** Sampling period: a timer every 10 ms (prom-client's own precision), cheap and fine enough for stalls. */
const RESOLUTION_MS = 10
const HELP = `Event-loop delay: how late a ${RESOLUTION_MS} ms timer fired (perf_hooks.monitorEventLoopDelay), cumulative`
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

export interface EventLoopDelayMetric {
  /** Stops the sampling timer. */
  close(): void
}

/**
 * Registers the histogram and the max gauge in `registry` and starts sampling.
 *
 * @example
 * const delay = installEventLoopDelay(registry)
 * app.addHook('onClose', async () => delay.close())
 */
export function installEventLoopDelay (registry: Registry): EventLoopDelayMetric {
  const monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  monitor.enable()
  // Each sample is the time between two timer ticks, so an on-time loop reads the resolution:
  // subtracted, 0 means on time.
  const resolutionNs = RESOLUTION_MS * 1e6
  const cumulative = BUCKETS.map(() => 0)
  let count = 0
  let sum = 0
  let maxSinceScrape = 0

  /** Moves the monitor's samples since the last fold into the cumulative buckets, then resets it. */
  const fold = (): void => {
    const n = monitor.count
    if (n === 0) return
    const points = [...monitor.percentiles.entries()]
    BUCKETS.forEach((le, i) => {
      // The share of samples at or below the bound: the highest percentile whose value fits.
      let share = 0
      for (const [percentile, ns] of points) {
        if (ns - resolutionNs > le * 1e9) break
        share = percentile / 100
      }
      cumulative[i]! += Math.round(share * n)
    })
    count += n
    sum += Math.max(0, monitor.mean - resolutionNs) * n / 1e9
    maxSinceScrape = Math.max(maxSinceScrape, Math.max(0, monitor.max - resolutionNs) / 1e9)
    monitor.reset()
  }

  const name = 'devicehub_event_loop_delay_seconds'
  class EventLoopDelayHistogram extends Histogram {
    /**
     * What prom-client's registry reads for the text format, and its `get()` for JSON (the method
     * exists on prom-client's Histogram, not in its types): our cumulative buckets, not observe()'s.
     */
    async getForPromString (): Promise<{
      name: string, help: string, type: string, aggregator: string,
      values: Array<{ metricName: string, labels: Record<string, string | number>, sharedLabels: Record<string, never>, value: number }>
    }> {
      fold()
      return {
        name,
        help: HELP,
        type: 'histogram',
        aggregator: 'sum',
        values: [
          ...BUCKETS.map((le, i) => ({ metricName: `${name}_bucket`, labels: { le }, sharedLabels: {}, value: cumulative[i]! })),
          { metricName: `${name}_bucket`, labels: { le: '+Inf' }, sharedLabels: {}, value: count },
          { metricName: `${name}_sum`, labels: {}, sharedLabels: {}, value: sum },
          { metricName: `${name}_count`, labels: {}, sharedLabels: {}, value: count }
        ]
      }
    }
  }
  new EventLoopDelayHistogram({
    name,
    help: HELP,
    buckets: BUCKETS,
    registers: [registry]
  })
  new Gauge({
    name: 'devicehub_event_loop_delay_max_seconds',
    help: 'Largest event-loop delay since the previous scrape (by any scraper)',
    registers: [registry],
    collect () {
      fold()
      this.set(maxSinceScrape)
      maxSinceScrape = 0
    }
  })
  return {
    close () {
      monitor.disable()
    }
  }
}
