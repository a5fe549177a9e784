/**
 * The devicehub server under test, in its own process: SQLite on a file, loopback, port 0.
 * Tells the parent its URL and an admin token over IPC and answers `stats` requests (RSS after
 * a GC, and parked waiters) so the parent can measure from outside.
 *
 * With BENCH_INIT=1 it only initialises the database and exits: the first start hashes the
 * admin password with scrypt, whose memory would otherwise stay in the measured RSS.
 */
import { startServer } from '../../lib/start-server.js'

const db = process.env.BENCH_DB
if (db === undefined) throw new Error('BENCH_DB is not set')
// BENCH_DURABILITY=full|normal overrides the default (normal on SQLite, the server's setting on PostgreSQL).
const durability = process.env.BENCH_DURABILITY === 'full' || process.env.BENCH_DURABILITY === 'normal' ? process.env.BENCH_DURABILITY : undefined
// BENCH_MQTT=1: the MQTT endpoint too, on a port of its own (bench/mqtt.ts).
const mqtt = process.env.BENCH_MQTT === '1' ? { port: 0 } : undefined
// BENCH_METRICS=on (with per-route CPU time) | no-route-cpu | off (the default): what /metrics costs.
const metrics = process.env.BENCH_METRICS === 'on' ? true : process.env.BENCH_METRICS === 'no-route-cpu' ? { routeCpu: false } : false
const server = await startServer({ db, port: 0, host: '127.0.0.1', admin: { password: 'bench-admin-password' }, logger: false, durability, metrics, mqtt })
if (process.env.BENCH_INIT === '1') {
  await server.hub.store.devices.insert({ id: 'bench-device', name: 'bench', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  for (let i = 0; i < 100; i++) {
    await server.hub.store.devices.insert({ id: `pair-${i}`, name: `pair ${i}`, data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  }
  await server.close()
  process.exit(0)
}
const { accessToken } = await server.adminTokens()
const gc = (globalThis as { gc?: () => void }).gc

process.on('message', (message: { type: string }) => {
  if (message.type === 'cpu') {
    const { user, system } = process.cpuUsage()
    process.send!({ type: 'cpu', cpu: user + system, system })
  } else if (message.type === 'stats') {
    gc?.()
    process.send!({ type: 'stats', rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed, waiters: server.hub.stats.parkedPolls })
  } else if (message.type === 'stop') {
    server.close().finally(() => process.exit(0))
  }
})
process.send!({ type: 'ready', url: server.url, token: accessToken, mqtt: server.mqttUrl })

if (process.env.BENCH_LAG === '1') {
  // Diagnostics: report event-loop stalls over BENCH_LAG_MS (default 50 ms; 10-20 shows a major GC's pause).
  const over = Number(process.env.BENCH_LAG_MS ?? 50)
  let last = performance.now()
  setInterval(() => {
    const now = performance.now()
    const stall = now - last - 10
    if (stall > over) console.error(`event loop stalled ${stall.toFixed(0)} ms`)
    last = now
  }, 10).unref()
}
