/**
 * A firmware test rig: start an in-memory devicehub on a free port, get an admin token, drive
 * it through the same REST API a device uses, and close it.
 *
 * Run: node --import tsx examples/test-rig.ts
 */
import { startServer } from '../lib/server.js'

export async function main (): Promise<{ url: string, info: { apiVersion: string } }> {
  const server = await startServer({ db: ':memory:', port: 0 })
  try {
    const { accessToken } = await server.adminTokens()
    const res = await fetch(`${server.url}/info`, { headers: { authorization: `Bearer ${accessToken}` } })
    const info = await res.json() as { apiVersion: string }
    console.log(`devicehub for tests at ${server.url} (API ${info.apiVersion})`)
    return { url: server.url, info }
  } finally {
    await server.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
