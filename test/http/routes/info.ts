import t from 'tap'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocket } from 'ws'
import { buildServer } from '../../../lib/http/build-server.js'
import type { BuildServerOptions } from '../../../lib/http/build-server.js'
import { parsePublicUrl } from '../../../lib/http/public-origin.js'
import { createTestApp } from '../../fixtures/app.js'
import type { TestApp } from '../../fixtures/app.js'
import type { TestContext } from '../../fixtures/store.js'

t.test('GET /info is public and reports versions, time and the WebSocket URL', async (t) => {
  const h = await createTestApp(t)
  const res = await h.request('GET', '/info', { token: null })
  t.equal(res.status, 200)
  t.same(Object.keys(res.body).sort(), ['apiVersion', 'serverTimestamp', 'serverVersion', 'webSocketServerUrl'])
  t.equal(res.body.apiVersion, '4.1.0')
  t.match(res.body.serverTimestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/)
  t.match(res.body.webSocketServerUrl, /^ws:\/\/.+\/api\/websocket$/)
})

/** A second app over the test hub, listening on 127.0.0.1, with these origin settings. */
async function listening (t: TestContext, h: TestApp, options: Partial<BuildServerOptions>): Promise<number> {
  const app = await buildServer({ hub: h.hub, closeHub: false, ...options })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

/** GET over a real socket with any headers, Host included (fetch would not send a chosen Host). */
function get (port: number, path: string, headers: Record<string, string>): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => { text += chunk.toString() })
      res.on('end', () => resolve(JSON.parse(text)))
    })
    req.on('error', reject)
    req.end()
  })
}

/** The restServerUrl a WebSocket session reports, the upgrade sent with these headers. */
async function restServerUrl (t: TestContext, port: number, headers: Record<string, string>): Promise<string> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/api/websocket`, { headers })
  t.teardown(() => socket.terminate())
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  socket.send(JSON.stringify({ action: 'server/info', requestId: 1 }))
  const reply = await new Promise<{ info: { restServerUrl: string } }>((resolve) => socket.once('message', (data) => resolve(JSON.parse(data.toString()))))
  return reply.info.restServerUrl
}

const FORGED = { host: 'evil.example:666', 'x-forwarded-host': 'evil2.example', 'x-forwarded-proto': 'https' }

t.test('without trustProxy, Host and X-Forwarded-* are ignored: the URLs name the address the client reached (#22)', async (t) => {
  const h = await createTestApp(t)
  const port = await listening(t, h, {})
  const authorization = `Bearer ${h.adminToken}`
  const info = await get(port, '/api/rest/info', FORGED)
  t.equal(info.webSocketServerUrl, `ws://127.0.0.1:${port}/api/websocket`)
  const plugin = await new Promise<any>((resolve, reject) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const req = httpRequest({ host: '127.0.0.1', port, path: '/api/rest/plugin', method: 'POST', headers: { ...FORGED, authorization, 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => { text += chunk.toString() })
      res.on('end', () => resolve(JSON.parse(text)))
    })
    req.on('error', reject)
    req.end('{"name":"p"}')
  })
  t.equal(plugin.proxyEndpoint, `ws://127.0.0.1:${port}/api/plugin/proxy`)
  t.equal(await restServerUrl(t, port, FORGED), `http://127.0.0.1:${port}/api/rest`)
  // The reported URL works for the client that asked.
  const ws = new WebSocket(info.webSocketServerUrl)
  t.teardown(() => ws.terminate())
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  t.pass('the reported WebSocket URL accepts connections')
})

t.test('with trustProxy, the proxy\'s headers name the origin; a malformed host is not used', async (t) => {
  const h = await createTestApp(t)
  const port = await listening(t, h, { trustProxy: true })
  t.equal((await get(port, '/api/rest/info', FORGED)).webSocketServerUrl, 'wss://evil2.example/api/websocket', 'X-Forwarded-Host and -Proto')
  t.equal((await get(port, '/api/rest/info', { host: 'dh.example:8080' })).webSocketServerUrl, 'ws://dh.example:8080/api/websocket', 'Host')
  t.equal(await restServerUrl(t, port, { 'x-forwarded-host': 'dh.example', 'x-forwarded-proto': 'https' }), 'https://dh.example/api/rest')
  for (const host of ['evil.example/path?x=1', 'user@evil.example', 'a b', 'x'.repeat(300)]) {
    const info = await get(port, '/api/rest/info', { host: 'ok.example', 'x-forwarded-host': host })
    t.equal(info.webSocketServerUrl, `ws://127.0.0.1:${port}/api/websocket`, `not ${host.slice(0, 40)}`)
  }
})

t.test('a configured public URL wins over everything', async (t) => {
  const h = await createTestApp(t)
  for (const trustProxy of [false, true]) {
    const port = await listening(t, h, { trustProxy, publicUrl: 'https://iot.example.com:8443/' })
    t.equal((await get(port, '/api/rest/info', FORGED)).webSocketServerUrl, 'wss://iot.example.com:8443/api/websocket', `trustProxy ${trustProxy}`)
    t.equal(await restServerUrl(t, port, FORGED), 'https://iot.example.com:8443/api/rest')
  }
  const port = await listening(t, h, { publicUrl: 'http://10.0.0.5:8080' })
  t.equal((await get(port, '/api/rest/info', {})).webSocketServerUrl, 'ws://10.0.0.5:8080/api/websocket')
})

t.test('a public URL must be an http(s) origin', async (t) => {
  t.equal(parsePublicUrl(' https://IOT.example.com/ '), 'https://iot.example.com')
  for (const bad of ['iot.example.com', 'ftp://iot.example.com', 'https://iot.example.com/dh', 'https://u:p@iot.example.com', 'https://x?y=1', '']) {
    t.throws(() => parsePublicUrl(bad), /The public URL must be an http\(s\) origin such as https:\/\/iot\.example\.com:8443/, JSON.stringify(bad))
  }
  const h = await createTestApp(t)
  await t.rejects(buildServer({ hub: h.hub, closeHub: false, publicUrl: 'ftp://x' }), /public URL/)
})
