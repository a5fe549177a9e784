/**
 * The benchmarks, against real server processes on SQLite over loopback, each next to a
 * bare-Fastify baseline measured in the same run. `npm run bench` runs all of them;
 * `npm run bench -- <scenario>` runs one (names below).
 */
import { mqttBench } from './mqtt.js'
import { dropBenchDatabases } from './pg.js'
import { commandRoundTrip } from './scenarios/command-round-trip.js'
import { commandRoundTripTwoInstances } from './scenarios/command-round-trip-two-instances.js'
import { notificationInsert } from './scenarios/notification-insert.js'
import { parkedPolls } from './scenarios/parked-polls.js'
import { pluginDelivery } from './scenarios/plugin-delivery.js'
import { rigStart } from './scenarios/rig-start.js'
import { webSocketInsert, webSocketLatency, webSocketSessions } from './scenarios/websocket.js'

const scenarios: Record<string, () => Promise<unknown>> = {
  insert: notificationInsert,
  roundtrip: commandRoundTrip,
  parked: parkedPolls,
  'ws-sessions': webSocketSessions,
  'ws-latency': webSocketLatency,
  'ws-insert': webSocketInsert,
  plugin: pluginDelivery,
  rig: rigStart,
  mqtt: mqttBench,
  // Needs BENCH_PG_URL: device on instance A, client on instance B, one PostgreSQL database.
  roundtrip2: commandRoundTripTwoInstances
}

const wanted = process.argv.slice(2)
const names = wanted.length === 0 ? Object.keys(scenarios).filter((n) => n !== 'roundtrip2' || process.env.BENCH_PG_URL) : wanted
try {
  for (const name of names) {
    const scenario = scenarios[name]
    if (scenario === undefined) {
      console.error(`unknown scenario '${name}' (choose from ${Object.keys(scenarios).join(', ')})`)
      process.exitCode = 2
      break
    }
    await scenario()
  }
} finally {
  await dropBenchDatabases()
}
