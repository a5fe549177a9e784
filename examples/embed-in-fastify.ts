/**
 * Mount devicehub inside your own Fastify application under a prefix, next to your routes.
 *
 * Run: node --import tsx examples/embed-in-fastify.ts
 */
import Fastify from 'fastify'
import { createDeviceHub, openSqliteStore } from '../lib/index.js'
import { devicehubPlugin } from '../lib/fastify.js'

export async function main (): Promise<{ health: unknown, info: unknown }> {
  const store = await openSqliteStore(':memory:')
  const hub = await createDeviceHub({ store, admin: { password: 'change-me-please' } })
  const app = Fastify()
  app.get('/health', async () => ({ ok: true }))
  await app.register(devicehubPlugin, { hub, prefix: '/iot/api/rest' })
  app.addHook('onClose', async () => hub.close())
  try {
    const login = await app.inject({ method: 'POST', url: '/iot/api/rest/token', payload: { login: 'dhadmin', password: 'change-me-please' } })
    const { accessToken } = login.json<{ accessToken: string }>()
    const info = await app.inject({ method: 'GET', url: '/iot/api/rest/info', headers: { authorization: `Bearer ${accessToken}` } })
    const health = await app.inject({ method: 'GET', url: '/health' })
    console.log('host route:', health.json(), 'devicehub:', info.json())
    return { health: health.json(), info: info.json() }
  } finally {
    await app.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
