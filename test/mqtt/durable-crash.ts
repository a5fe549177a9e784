/**
 * MQTT 5 session expiry when the instance serving a session dies while it is connected (issue
 * #25): the crashed instance never writes the session's deadline, so the session's hold carries
 * its interval and a lease the live instance renews. Once the lease has lapsed for longer than the
 * interval, another instance over the same database treats the session as expired: absent on the
 * client's next CONNECT (session present 0, nothing resumed), pruned when nobody reconnects. A
 * session whose instance runs is not expired while connected, however long. On a SQLite file and
 * on PostgreSQL, with real `mqtt` clients over real sockets.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mqtt from 'mqtt'
import type { IClientOptions, IConnackPacket, MqttClient } from 'mqtt'
import t from 'tap'
import type { Test } from 'tap'
import type { Store } from '../../lib/core/ports.js'
import type { RunningServer, StartServerOptions } from '../../lib/start-server.js'
import { startServer } from '../../lib/start-server.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'
import { ADMIN, collect, eventually, request } from '../fixtures/mqtt.js'
import { commandTopic, rest, sendCommand } from '../fixtures/mqtt-sleepy.js'

const LEASE_MS = 300
const EXPIRY_SECONDS = 1
/** Past the lease and the interval after the last renewal, with a margin. */
const LAPSE_MS = LEASE_MS + EXPIRY_SECONDS * 1000 + 400

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function options (db: string): StartServerOptions {
  return {
    db, port: 0, jwtSecret: 'durable-crash-secret-0123456789abcdef', admin: { password: ADMIN.password },
    mqtt: { port: 0, limits: { sessionLeaseMs: LEASE_MS, handoverWaitMs: 100 } }
  }
}

/** A persistent MQTT 5 session with a 1 s expiry; resolves once connected, with the CONNACK. */
async function connect (t: Test, url: string, clientId: string): Promise<{ client: MqttClient, connack: IConnackPacket }> {
  const settings: IClientOptions = {
    protocolVersion: 5, clientId, clean: false, properties: { sessionExpiryInterval: EXPIRY_SECONDS },
    username: ADMIN.login, password: ADMIN.password, reconnectPeriod: 0, connectTimeout: 5000
  }
  const client = mqtt.connect(url, settings)
  t.teardown(() => client.endAsync(true))
  const connack = await new Promise<IConnackPacket>((resolve, reject) => {
    client.once('connect', resolve)
    client.once('error', reject)
  })
  return { client, connack }
}

/** The instance dies: from now on it writes nothing of its sessions (no deadline, no release, no renewal). */
function freezeSessions (store: Store): void {
  const sessions = store.mqttSessions as unknown as Record<string, unknown>
  for (const name of Object.keys(sessions)) sessions[name] = async () => undefined
}

async function crashScenario (t: Test, db: string): Promise<void> {
  const a = await startServer(options(db))
  t.teardown(() => a.close())
  const { accessToken: token } = await a.adminTokens()
  t.equal((await rest(a.url, token, 'PUT', '/device/crash-dev', { name: 'crash-dev' })).status, 204)
  const userId = (await rest<{ id: number }>(a.url, token, 'GET', '/user/current')).body.id
  for (const clientId of ['crash-x', 'crash-y']) {
    const { client } = await connect(t, a.mqttUrl!, clientId)
    t.match(await client.subscribeAsync(commandTopic('crash-dev'), { qos: 1 }), [{ qos: 1 }])
  }
  await sleep(LEASE_MS) // a renewal or two while connected

  freezeSessions(a.hub.store)
  await a.close()
  const b: RunningServer = await startServer(options(db))
  t.teardown(() => b.close())
  const sessions = b.hub.store.mqttSessions
  const x = { userId, clientId: 'crash-x' }
  t.equal((await sessions.list(x)).length, 1, 'what the crash left: the subscription, still there')
  t.match(await sessions.holderOf(x), { holder: String }, 'and the dead connection\'s hold')
  await sendCommand(b.url, token, 'crash-dev', 'while-dead')

  await sleep(LAPSE_MS)
  const back = await connect(t, b.mqttUrl!, 'crash-x')
  const seen = collect(back.client)
  t.equal(back.connack.sessionPresent, false, 'back after the lease and the interval: the session expired')
  t.equal((await request(back.client, { action: 'server/info' })).status, 'success')
  await sleep(300)
  t.same(seen.filter((m) => m.topic.startsWith('dh/command/')), [], 'nothing resumed')
  t.same((await sessions.list(x)).map((s) => s.topic), [`dh/response/server/info@crash-x`], 'only what this connection subscribed')
  const y = { userId, clientId: 'crash-y' }
  await eventually(async () => (await sessions.list(y)).length === 0)
  t.equal(await sessions.holderOf(y), undefined, 'the session nobody reconnects is pruned, its hold too')

  // A session on a live instance is renewed: connected for longer than the lease and its interval, it stays.
  const z = await connect(t, b.mqttUrl!, 'crash-z')
  await z.client.subscribeAsync(commandTopic('crash-dev'), { qos: 1 })
  await sleep(LAPSE_MS)
  await sessions.dropExpired(Date.now())
  t.equal((await sessions.list({ userId, clientId: 'crash-z' })).length, 1, 'not pruned while connected')
  await z.client.endAsync()
  const again = await connect(t, b.mqttUrl!, 'crash-z')
  t.equal(again.connack.sessionPresent, true, 'and resumed on reconnect')
}

t.test('SQLite: a session whose instance crashed while connected expires', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-crash-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  await crashScenario(t, join(dir, 'hub.db'))
})

postgresTest('PostgreSQL: a session whose instance crashed while connected expires', async (t, adminUrl) => {
  await crashScenario(t, await createTestDatabase(t, adminUrl))
})
