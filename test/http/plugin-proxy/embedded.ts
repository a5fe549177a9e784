/** P1 when embedded: devicehub mounted in a host Fastify app serves the plugin proxy beside its REST base. */
import Fastify from 'fastify'
import t from 'tap'
import { WebSocket } from 'ws'
import { createDeviceHub } from '../../../lib/core/devicehub.js'
import { devicehubPlugin } from '../../../lib/http/plugin.js'
import { ADMIN_PASSWORD, JWT_SECRET } from '../../fixtures/app.js'
import { ProxyClient } from '../../fixtures/plugin-proxy.js'
import { openTestStore } from '../../fixtures/store.js'

t.test('embedded under /iot/api/rest: proxyEndpoint is /iot/api/plugin/proxy and it answers', async (t) => {
  const store = await openTestStore(t)
  const hub = await createDeviceHub({ store, jwtSecret: JWT_SECRET, admin: { password: ADMIN_PASSWORD } })
  const app = Fastify()
  app.get('/health', async () => ({ ok: true }))
  await app.register(devicehubPlugin, { hub, prefix: '/iot/api/rest' })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const clients: ProxyClient[] = []
  t.teardown(async () => {
    for (const c of clients) c.ws.terminate()
    await app.close()
    await hub.close()
  })
  t.equal(app.hasDecorator('swagger'), false, 'the REST part stays encapsulated')
  const { accessToken } = await hub.tokens.issueForUser(1)
  const res = await fetch(`${address}/iot/api/rest/plugin`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body: '{"name":"p"}' })
  t.equal(res.status, 201)
  const plugin = await res.json() as { proxyEndpoint: string, accessToken: string, topicName: string }
  t.equal(plugin.proxyEndpoint, `${address.replace(/^http/, 'ws')}/iot/api/plugin/proxy`)
  const client = new ProxyClient(new WebSocket(plugin.proxyEndpoint))
  clients.push(client)
  await new Promise((resolve, reject) => client.ws.once('open', resolve).once('error', reject))
  t.equal((await client.request({ t: 'health' })).s, 0)
  t.equal((await client.authenticate(plugin.accessToken)).s, 0)
  t.equal((await client.subscribe(plugin.topicName)).s, 0)
  t.same(await (await fetch(`${address}/health`)).json(), { ok: true }, 'host routes untouched')
})
