/**
 * Two instances over one PostgreSQL database (PostgreSQL doorbells): a plugin connected to A gets
 * what is written through B, and A sees B's status changes and delete at once.
 */
import { randomBytes } from 'node:crypto'
import { WebSocket } from 'ws'
import { createDeviceHub } from '../../../lib/core/devicehub.js'
import type { DeviceHub } from '../../../lib/core/devicehub.js'
import { createPostgresDoorbell } from '../../../lib/doorbells/postgres-doorbell.js'
import { buildServer } from '../../../lib/http/build-server.js'
import { openPostgresStore } from '../../../lib/store/dialects/postgres.js'
import { postgresOrdering } from '../../../lib/store/ordering/postgres-ordering.js'
import { ADMIN_PASSWORD, JWT_SECRET } from '../../fixtures/app.js'
import { sleep } from '../../fixtures/messaging.js'
import { ProxyClient } from '../../fixtures/plugin-proxy.js'
import { dropSchema, uniqueSchemaName } from '../../fixtures/store.js'
import { postgresTest } from '../../fixtures/pg-database.js'


postgresTest('two instances on one database', async (t, url) => {
  t.test('a plugin on instance A follows writes, status changes and delete made on instance B', async (t) => {
    const schema = uniqueSchemaName()
    const channel = `devicehub_test_${randomBytes(6).toString('hex')}`
    const hubs: DeviceHub[] = []
    const clients: ProxyClient[] = []
    t.teardown(async () => {
      for (const c of clients) c.ws.terminate()
      for (const hub of hubs) await hub.close()
      await dropSchema(url, schema)
    })
    const start = async (): Promise<{ hub: DeviceHub, base: string }> => {
      const store = await openPostgresStore(url, { schema, maxConnections: 3 })
      const doorbell = await createPostgresDoorbell(url, { channel })
      const hub = await createDeviceHub({ store, bus: doorbell, ordering: postgresOrdering(store, doorbell), jwtSecret: JWT_SECRET, admin: { password: ADMIN_PASSWORD } })
      hubs.push(hub)
      const app = await buildServer({ hub, closeHub: false })
      t.teardown(() => app.close())
      return { hub, base: await app.listen({ port: 0, host: '127.0.0.1' }) }
    }
    const a = await start()
    const b = await start()
    const { accessToken: admin } = await b.hub.tokens.issueForUser(1)
    const rest = async (method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> => { // eslint-disable-line @typescript-eslint/no-explicit-any
      const res = await fetch(`${b.base}/api/rest${path}`, {
        method,
        headers: { authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
      const text = await res.text()
      return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
    }
    const plugin = (await rest('POST', '/plugin?returnNotifications=true', { name: 'two' })).body
    t.equal((await rest('PUT', '/device/two-dev', { name: 'd', networkId: 1, deviceTypeId: 1 })).status, 204)

    const client = new ProxyClient(new WebSocket(`${a.base.replace(/^http/, 'ws')}/api/plugin/proxy`))
    clients.push(client)
    await new Promise((resolve, reject) => client.ws.once('open', resolve).once('error', reject))
    t.equal((await client.authenticate(plugin.accessToken)).s, 0)
    t.equal((await client.subscribe(plugin.topicName)).s, 0)

    await rest('POST', '/device/two-dev/notification', { notification: 'one' })
    await client.waitDeliveries(1)
    t.equal((await rest('PUT', `/plugin?topicName=${plugin.topicName}&status=INACTIVE`)).status, 204)
    await sleep(300)
    await rest('POST', '/device/two-dev/notification', { notification: 'while-inactive' })
    t.equal((await rest('PUT', `/plugin?topicName=${plugin.topicName}&status=ACTIVE`)).status, 204)
    await sleep(300)
    await rest('POST', '/device/two-dev/notification', { notification: 'two' })
    await client.waitDeliveries(2)
    await sleep(200)
    t.same(client.deliveries.map((d) => d.event.b.notification.notification), ['one', 'two'])
    t.equal((await rest('DELETE', `/plugin?topicName=${plugin.topicName}`)).status, 204)
    t.same(await client.closed, { code: 1008, reason: 'Plugin is not found' })
  })
})
