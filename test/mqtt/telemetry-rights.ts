/**
 * Telemetry publishes under a principal verified once a second (lib/mqtt/mqtt-telemetry.ts,
 * MqttTelemetry.principal): rights lost count at the very next publish (the `revoke` drops it), and a
 * refusal under the reused principal is checked again under a fresh one.
 */
import t from 'tap'
import type { MqttClient } from 'mqtt'
import { addDeviceWorld, addUser, connectMqtt, nextMessage, startMqttHarness } from '../fixtures/mqtt.js'
import type { MqttHarness } from '../fixtures/mqtt.js'
import type { TestContext } from '../fixtures/store.js'

type World = Awaited<ReturnType<typeof addDeviceWorld>>

/** Publishes telemetry `name` and resolves with the reply on the insert response topic, if any, within `ms`. */
async function publish (client: MqttClient, world: World, name: string, ms = 300): Promise<{ status?: string, code?: number } | undefined> {
  const reply = nextMessage(client, (topic) => topic.startsWith('dh/response/notification/insert'), ms).then((m) => m.payload, () => undefined)
  await client.publishAsync(`dh/notification/${world.networkId}/${world.deviceTypeId}/${world.deviceId}/${name}`, JSON.stringify({ n: name }), { qos: 1 })
  return reply
}

async function stored (h: MqttHarness, world: World, name: string): Promise<number> {
  const list = await h.rest('GET', `/device/${world.deviceId}/notification?notification=${name}`)
  return (list.body as unknown[]).length
}

async function userPublisher (t: TestContext, h: MqttHarness, world: World, login: string, networkIds: number[]): Promise<{ id: number, client: MqttClient }> {
  const user = await addUser(h, `${login}-${process.pid}`, networkIds)
  const client = await connectMqtt(t, h.url, { username: user.login, password: user.password })
  await client.subscribeAsync(`dh/response/notification/insert@${client.options.clientId}`)
  return { id: user.id, client }
}

t.test('a revocation refuses the very next telemetry publish', async (t) => {
  const h = await startMqttHarness(t)
  const world = await addDeviceWorld(h, 'tel-revoke')
  const { id, client } = await userPublisher(t, h, world, 'tel-dave', [world.networkId])
  t.equal(await publish(client, world, 'before'), undefined, 'stored, not answered')
  t.equal(await stored(h, world, 'before'), 1)

  t.equal((await h.rest('DELETE', `/user/${id}/network/${world.networkId}`)).status, 204)
  const refused = await publish(client, world, 'after', 2000)
  t.match(refused, { status: 'error', code: 403 }, 'refused at once, not a second later')
  t.equal(await stored(h, world, 'after'), 0)
})

t.test('a password change refuses the old token\'s next publish', async (t) => {
  const h = await startMqttHarness(t)
  const world = await addDeviceWorld(h, 'tel-password')
  const { id, client } = await userPublisher(t, h, world, 'tel-erin', [world.networkId])
  t.equal(await publish(client, world, 'before'), undefined)
  t.equal((await h.rest('PUT', `/user/${id}`, { password: 'another-password-2' })).status, 204)
  t.match(await publish(client, world, 'after', 2000), { status: 'error', code: 401 })
  t.equal(await stored(h, world, 'after'), 0)
})

t.test('a device moved into the publisher\'s scope is accepted at the next publish', async (t) => {
  const h = await startMqttHarness(t)
  const world = await addDeviceWorld(h, 'tel-move')
  const home = await addDeviceWorld(h, 'tel-move-home')
  const { client } = await userPublisher(t, h, world, 'tel-frank', [home.networkId])
  // Verified on its own device first, so the principal below is the reused one.
  t.equal(await publish(client, home, 'own'), undefined)
  t.match(await publish(client, world, 'before', 2000), { status: 'error', code: 403 })
  const moved = await h.rest('PUT', `/device/${world.deviceId}`, { name: world.deviceId, networkId: home.networkId, deviceTypeId: world.deviceTypeId })
  t.equal(moved.status, 204)
  const now = { ...world, networkId: home.networkId }
  t.equal(await publish(client, now, 'after'), undefined, 'no refusal')
  t.equal(await stored(h, now, 'after'), 1)
})
