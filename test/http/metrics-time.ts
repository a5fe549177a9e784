/**
 * Where time goes, in /metrics (issue #26, point 5): the event-loop delay histogram and the
 * per-route CPU time, scraped over a real socket from a real server after real requests.
 */
import t from 'tap'
import { startServer } from '../../lib/start-server.js'
import { ADMIN_PASSWORD } from '../fixtures/app.js'

/** The value of one series (exact name and label set as printed), or undefined. */
function series (text: string, nameAndLabels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${nameAndLabels} `))
  return line === undefined ? undefined : Number(line.slice(nameAndLabels.length + 1))
}

t.test('GET /metrics: event-loop delay histogram and CPU time by route', async (t) => {
  const server = await startServer({ port: 0, metrics: true, admin: { password: ADMIN_PASSWORD } })
  t.teardown(() => server.close())
  const origin = new URL(server.url).origin
  const scrape = async (): Promise<string> => (await fetch(`${origin}/metrics`)).text()
  const { accessToken } = await server.adminTokens()
  const headers = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }

  const put = await fetch(`${server.url}/device/cpu-1`, { method: 'PUT', headers, body: JSON.stringify({ name: 'cpu', networkId: 1 }) })
  t.equal(put.status, 204)
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${server.url}/device/cpu-1/notification`, { method: 'POST', headers, body: JSON.stringify({ notification: 'n', parameters: { i } }) })
    t.equal(res.status, 201)
  }
  // A stall of 60 ms in this process (the server's own event loop), then enough ticks for the
  // sampling timer to record it.
  const spinUntil = performance.now() + 60
  while (performance.now() < spinUntil) { /* stall the loop on purpose */ }
  await new Promise((resolve) => setTimeout(resolve, 50))

  const text = await scrape()
  t.match(text, /# TYPE devicehub_event_loop_delay_seconds histogram/)
  const count = series(text, 'devicehub_event_loop_delay_seconds_count')!
  t.ok(count > 0, `delay samples were taken (${count})`)
  t.equal(series(text, 'devicehub_event_loop_delay_seconds_bucket{le="+Inf"}'), count, '+Inf holds every sample')
  const below25ms = series(text, 'devicehub_event_loop_delay_seconds_bucket{le="0.025"}')!
  t.ok(below25ms < count, `the 60 ms stall lies above the 25 ms bucket (${below25ms} of ${count})`)
  t.ok(series(text, 'devicehub_event_loop_delay_seconds_bucket{le="0.001"}')! <= below25ms, 'buckets are cumulative')
  t.ok(series(text, 'devicehub_event_loop_delay_seconds_sum')! >= 0.04, 'the sum holds the stall')
  const max = series(text, 'devicehub_event_loop_delay_max_seconds')!
  t.ok(max >= 0.04 && max < 10, `the largest delay since the last scrape is the stall (${max} s)`)
  t.match(text, /nodejs_eventloop_lag_p99_seconds/, "prom-client's per-scrape gauges stay beside it")

  const route = 'devicehub_http_route_cpu_seconds_total{method="POST",route="/api/rest/device/:deviceId/notification"}'
  const insertCpu = series(text, route)!
  t.ok(insertCpu > 0 && insertCpu < 20, `20 inserts were charged CPU time (${insertCpu} s)`)
  t.ok(series(text, 'devicehub_http_route_cpu_seconds_total{method="PUT",route="/api/rest/device/:id"}')! > 0, 'the device PUT too')
  const charged = text.split('\n').filter((l) => l.startsWith('devicehub_http_route_cpu_seconds_total{')).reduce((sum, l) => sum + Number(l.split(' ')[1]), 0)
  const processCpu = series(text, 'process_cpu_seconds_total')!
  t.ok(charged <= processCpu, `no more than the process used is charged (${charged} of ${processCpu} s)`)
  t.notMatch(text, /route_cpu_seconds_total\{[^}]*route="[^"]*cpu-1/, 'route patterns, not raw URLs')

  const later = await scrape()
  t.ok(series(later, 'devicehub_event_loop_delay_seconds_count')! >= count, 'the histogram is cumulative across scrapes')
  t.ok(series(later, 'devicehub_event_loop_delay_max_seconds')! < max, 'the max starts again after a scrape')
  t.ok(series(later, route)! >= insertCpu, 'the CPU counter only grows')
})

t.test('the delay histogram and route CPU come without the process metrics; routeCpu: false turns the latter off', async (t) => {
  const server = await startServer({ port: 0, metrics: { processMetrics: false, routeCpu: false }, admin: { password: ADMIN_PASSWORD } })
  t.teardown(() => server.close())
  const origin = new URL(server.url).origin
  t.equal((await fetch(`${server.url}/info`)).status, 200)
  const text = await (await fetch(`${origin}/metrics`)).text()
  t.match(text, /devicehub_event_loop_delay_seconds_bucket\{le="0.001"\}/)
  t.notMatch(text, /nodejs_eventloop_lag/)
  t.notMatch(text, /devicehub_http_route_cpu_seconds_total\{/)
})

t.test('CPU by route: a request alone is charged all the CPU it used, after HEAD and aborted requests', async (t) => {
  const server = await startServer({
    port: 0,
    metrics: true,
    admin: { password: ADMIN_PASSWORD },
    configure (app) {
      // Burns 50 ms of process CPU (not wall time: a busy machine may deschedule the process).
      app.get('/burn', async () => {
        const start = process.cpuUsage()
        for (;;) {
          const used = process.cpuUsage(start)
          if (used.user + used.system >= 50_000) return { burnt: true }
        }
      })
      app.get('/slow', async () => {
        await new Promise((resolve) => setTimeout(resolve, 300))
        return { slow: true }
      })
    }
  })
  t.teardown(() => server.close())
  const origin = new URL(server.url).origin
  t.equal((await fetch(`${server.url}/info`, { method: 'HEAD' })).status, 200, 'a HEAD route (exposed for GET)')
  t.equal((await fetch(`${server.url}/info`)).status, 200)
  const aborted = new AbortController()
  const slow = fetch(`${origin}/slow`, { signal: aborted.signal }).catch((error: Error) => error)
  await new Promise((resolve) => setTimeout(resolve, 50))
  aborted.abort()
  t.type(await slow, Error, 'the client gave up on /slow')
  await new Promise((resolve) => setTimeout(resolve, 400))

  t.equal((await fetch(`${origin}/burn`)).status, 200)
  const text = await (await fetch(`${origin}/metrics`)).text()
  const burn = series(text, 'devicehub_http_route_cpu_seconds_total{method="GET",route="/burn"}')!
  // Were a finished or aborted request still counted in flight, /burn would get half or less.
  t.ok(burn >= 0.045, `alone in flight, /burn is charged its 50 ms of CPU (${burn} s)`)
  t.ok(series(text, 'devicehub_http_route_cpu_seconds_total{method="HEAD",route="/api/rest/info"}')! > 0, 'HEAD is charged under its own method')
})
