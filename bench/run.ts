/**
 * The benchmarks, against real server processes on SQLite over loopback, each next to a
 * bare-Fastify baseline measured in the same run. `npm run bench` runs all of them;
 * `npm run bench -- insert|roundtrip|parked` runs one.
 */
import { commandRoundTrip } from './scenarios/command-round-trip.js'
import { notificationInsert } from './scenarios/notification-insert.js'
import { parkedPolls } from './scenarios/parked-polls.js'

const scenarios: Record<string, () => Promise<unknown>> = {
  insert: notificationInsert,
  roundtrip: commandRoundTrip,
  parked: parkedPolls
}

const wanted = process.argv.slice(2)
const names = wanted.length === 0 ? Object.keys(scenarios) : wanted
for (const name of names) {
  const scenario = scenarios[name]
  if (scenario === undefined) {
    console.error(`unknown scenario '${name}' (choose from ${Object.keys(scenarios).join(', ')})`)
    process.exit(2)
  }
  await scenario()
}
