/**
 * A devicehub plugin: connect to the `proxyEndpoint` that `POST /plugin` returned, authenticate
 * with the plugin's access token, subscribe to its topic and log every delivery. Keep the last
 * cursor and pass it as `c` when subscribing again: after a reconnect nothing is lost.
 *
 * Run: node --import tsx examples/plugin-logger.ts (starts its own in-memory server)
 */
import { WebSocket } from 'ws'
import { startServer } from '../lib/server.js'

export function runPlugin (proxyEndpoint: string, accessToken: string, topic: string, onEvent: (event: any, cursor: string) => void, cursor?: string): WebSocket { // eslint-disable-line @typescript-eslint/no-explicit-any
  const ws = new WebSocket(proxyEndpoint)
  ws.on('open', () => ws.send(JSON.stringify({ id: 'auth', t: 'plugin', a: 'authenticate', p: { token: accessToken } })))
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString())
    if (frame.s !== 0) return console.error('refused:', frame.p.m)
    if (frame.id === 'auth') ws.send(JSON.stringify({ id: 'sub', t: 'topic', a: 'subscribe', p: { t: [topic], ...(cursor ? { c: cursor } : {}) } }))
    if (frame.t !== 'notif' || frame.id !== undefined) return
    cursor = frame.p.c // remember it: subscribe with { c: cursor } to resume after a reconnect
    const { b } = JSON.parse(frame.p.m) // the event: b.notification (a: 10) or b.command (a: 21 insert, 23 update)
    const what = b.notification ? `notification ${b.notification.notification}` : `command ${b.command.command}${b.a === 23 ? ' (updated)' : ''}`
    console.log(`${what} from ${(b.notification ?? b.command).deviceId}`, cursor)
    onEvent(b, frame.p.c)
  })
  return ws
}

/** The whole round: a server, a plugin registered over REST, the plugin above, one notification. */
export async function main (): Promise<{ proxyEndpoint: string, events: unknown[] }> {
  const server = await startServer({ db: ':memory:', port: 0 })
  try {
    const { accessToken: admin } = await server.adminTokens()
    const json = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }
    const registration = await fetch(`${server.url}/plugin?returnNotifications=true&returnCommands=true`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'logger' }) })
    const plugin = await registration.json() as { proxyEndpoint: string, accessToken: string, topicName: string }
    const events: unknown[] = []
    const received = new Promise<void>((resolve) => {
      const ws = runPlugin(plugin.proxyEndpoint, plugin.accessToken, plugin.topicName, (event) => {
        events.push(event)
        ws.close()
        resolve()
      })
      // Once subscribed (the reply to 'sub'), a device reports a reading.
      ws.on('message', (data) => {
        if (JSON.parse(data.toString()).id !== 'sub') return
        void (async () => {
          await fetch(`${server.url}/device/thermo-1`, { method: 'PUT', headers: json, body: JSON.stringify({ name: 'Thermometer', networkId: 1, deviceTypeId: 1 }) })
          await fetch(`${server.url}/device/thermo-1/notification`, { method: 'POST', headers: json, body: JSON.stringify({ notification: 'temperature', parameters: { value: 21.5 } }) })
        })()
      })
    })
    await received
    return { proxyEndpoint: plugin.proxyEndpoint, events }
  } finally {
    await server.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
