/**
 * CONNACK session present (MQTT 3.1.1 §3.2.2.2, MQTT 5 §3.2.2.1.1): 1 when the server resumes a
 * session stored for the client, 0 on a clean session / clean start, when nothing was stored, and
 * when the stored session expired. Real `mqtt` clients (3.1.1 and 5), over TCP and WebSocket.
 */
import mqtt from 'mqtt'
import type { IClientOptions, IConnackPacket } from 'mqtt'
import t from 'tap'
import type { Test } from 'tap'
import type { MqttHarness } from '../fixtures/mqtt.js'
import { ADMIN, addDeviceWorld, startMqttHarness } from '../fixtures/mqtt.js'

const login = { username: ADMIN.login, password: ADMIN.password, reconnectPeriod: 0, connectTimeout: 5000 }

/** Connects, and resolves with the CONNACK's session present; the client leaves gracefully, subscribing to nothing. */
async function sessionPresent (t: Test, url: string, options: IClientOptions): Promise<boolean> {
  const client = mqtt.connect(url, { ...login, ...options })
  t.teardown(() => client.endAsync(true))
  const connack = await new Promise<IConnackPacket>((resolve, reject) => {
    client.once('connect', resolve)
    client.once('error', reject)
  })
  await client.endAsync()
  return connack.sessionPresent
}

/** Subscribes to the device's commands over a persistent connection, then leaves. */
async function subscribeAndLeave (t: Test, url: string, options: IClientOptions, deviceId: string): Promise<boolean> {
  const client = mqtt.connect(url, { ...login, ...options })
  t.teardown(() => client.endAsync(true))
  const connack = await new Promise<IConnackPacket>((resolve, reject) => {
    client.once('connect', resolve)
    client.once('error', reject)
  })
  t.match(await client.subscribeAsync(`dh/command/+/+/${deviceId}/#`, { qos: 1 }), [{ qos: 1 }])
  await client.endAsync()
  return connack.sessionPresent
}

const transports: Array<[string, (h: MqttHarness) => string]> = [
  ['TCP', (h) => h.url],
  ['WebSocket', (h) => h.server.mqttWebSocketUrl!]
]

for (const [transport, urlOf] of transports) {
  t.test(`${transport}, MQTT 3.1.1: session present says whether a stored session was resumed`, async (t) => {
    const h = await startMqttHarness(t)
    const url = urlOf(h)
    const { deviceId } = await addDeviceWorld(h, `present-4-${transport}`)
    const persistent: IClientOptions = { protocolVersion: 4, clientId: `present-4-${transport}-${process.pid}`, clean: false }
    t.equal(await sessionPresent(t, url, persistent), false, 'first connect: nothing stored')
    t.equal(await subscribeAndLeave(t, url, persistent, deviceId), false, 'still nothing stored when it subscribes')
    t.equal(await sessionPresent(t, url, persistent), true, 'reconnect after subscribing: the session is resumed')
    t.equal(await sessionPresent(t, url, persistent), true, 'and again')
    t.equal(await sessionPresent(t, url, { ...persistent, clean: true }), false, 'a clean session: 0')
    t.equal(await sessionPresent(t, url, persistent), false, 'the clean session discarded the stored one')
  })

  t.test(`${transport}, MQTT 5: session present says whether a stored session was resumed`, async (t) => {
    const h = await startMqttHarness(t)
    const url = urlOf(h)
    const { deviceId } = await addDeviceWorld(h, `present-5-${transport}`)
    const persistent: IClientOptions = {
      protocolVersion: 5, clientId: `present-5-${transport}-${process.pid}`, clean: false, properties: { sessionExpiryInterval: 3600 }
    }
    t.equal(await sessionPresent(t, url, persistent), false, 'first connect: nothing stored')
    t.equal(await subscribeAndLeave(t, url, persistent, deviceId), false, 'still nothing stored when it subscribes')
    t.equal(await sessionPresent(t, url, persistent), true, 'reconnect after subscribing: the session is resumed')
    t.equal(await sessionPresent(t, url, { ...persistent, clean: true }), false, 'a clean start (with an expiry): 0')
    t.equal(await sessionPresent(t, url, persistent), false, 'the clean start discarded the stored session')
    t.equal(await subscribeAndLeave(t, url, persistent, deviceId), false)
    const once: IClientOptions = { ...persistent, properties: {} }
    t.equal(await sessionPresent(t, url, once), true, 'no clean start, no expiry: the stored session is resumed (MQTT 5 §3.1.2.4)')
    t.equal(await sessionPresent(t, url, persistent), false, 'and it ended with that connection (an expiry of 0)')

    // Expired: an interval of 1 s, away for longer.
    const short: IClientOptions = { ...persistent, properties: { sessionExpiryInterval: 1 } }
    t.equal(await subscribeAndLeave(t, url, short, deviceId), false)
    t.equal(await sessionPresent(t, url, short), true, 'back within the interval: resumed')
    await new Promise((resolve) => setTimeout(resolve, 1300))
    t.equal(await sessionPresent(t, url, short), false, 'back after the interval: the session expired')
  })
}
