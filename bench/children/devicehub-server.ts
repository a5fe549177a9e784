/**
 * The devicehub server under test, in its own process: SQLite on a temporary file, loopback,
 * port 0. Tells the parent its URL and an admin token over IPC and answers `stats` requests
 * (RSS and parked waiters) so the parent can measure from outside.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { MemoryHub } from '../../lib/core/realtime/memory-hub.js'
import { startServer } from '../../lib/start-server.js'

const dir = mkdtempSync(join(tmpdir(), 'devicehub-bench-'))
const server = await startServer({ db: join(dir, 'bench.db'), port: 0, host: '127.0.0.1', admin: { password: 'bench-admin-password' }, logger: false })
const { accessToken } = await server.adminTokens()
await server.hub.store.devices.insert({ id: 'bench-device', name: 'bench', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
for (let i = 0; i < 100; i++) {
  await server.hub.store.devices.insert({ id: `pair-${i}`, name: `pair ${i}`, data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'stats') {
    process.send!({ type: 'stats', rss: process.memoryUsage().rss, waiters: (server.hub.hub as MemoryHub).size })
  } else if (message.type === 'stop') {
    server.close().finally(() => {
      rmSync(dir, { recursive: true, force: true })
      process.exit(0)
    })
  }
})
process.send!({ type: 'ready', url: server.url, token: accessToken })
