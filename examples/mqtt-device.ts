/**
 * A firmware-style MQTT device (docs/mqtt.md): it connects with an access token as the MQTT
 * password and a persistent session (clean session off, so commands sent while it sleeps wait
 * for it), subscribes to its own commands with QoS 1, answers each with `command/update` on
 * `dh/request`, and publishes telemetry on `dh/notification/<networkId>/<deviceTypeId>/<deviceId>/<name>`.
 * What a small board does with an MQTT library; here in TypeScript with `mqtt`.
 *
 * Run: node --import tsx examples/mqtt-device.ts (starts its own in-memory server)
 */
import mqtt from 'mqtt'
import type { MqttClient } from 'mqtt'
import { startServer } from '../lib/server.js'

export interface DeviceConfig {
  /** `mqtt://host:1883`. */
  url: string
  token: string
  deviceId: string
  networkId: number
  deviceTypeId: number
}

/** The device: resolves once connected and subscribed; `report()` publishes a reading. */
export async function runMqttDevice (config: DeviceConfig): Promise<{ report: (celsius: number) => Promise<void>, stop: () => Promise<void> }> {
  const { deviceId } = config
  const client: MqttClient = await mqtt.connectAsync(config.url, {
    clientId: deviceId, // one session per device: the commands it missed are kept under this id
    clean: false,
    password: config.token, // a JWT as the password is an access token (any username)
    username: deviceId,
    protocolVersion: 4
  })
  client.on('message', (topic, payload) => {
    if (!topic.startsWith('dh/command/')) return
    const { command } = JSON.parse(payload.toString()) as { command: { id: number, command: string, parameters: { celsius?: number } | null } }
    const ok = command.command === 'set-target' && typeof command.parameters?.celsius === 'number'
    const update = ok ? { status: 'done', result: { target: command.parameters!.celsius } } : { status: 'rejected' }
    client.publish('dh/request', JSON.stringify({ action: 'command/update', deviceId, commandId: command.id, command: update }), { qos: 1 })
  })
  // QoS 1: each command is sent until the device acknowledges it, across reconnects and restarts.
  await client.subscribeAsync(`dh/command/${config.networkId}/${config.deviceTypeId}/${deviceId}/+`, { qos: 1 })
  return {
    async report (celsius) {
      // Telemetry: the payload is the notification's parameters, the last level its name.
      await client.publishAsync(`dh/notification/${config.networkId}/${config.deviceTypeId}/${deviceId}/temperature`, JSON.stringify({ celsius }), { qos: 1 })
    },
    async stop () {
      await client.endAsync()
    }
  }
}

/** The whole round: a server, a device token, the device above, one command and one reading. */
export async function main (): Promise<{ update: unknown, notification: unknown }> {
  const server = await startServer({ db: ':memory:', port: 0, mqtt: { port: 0 } })
  try {
    const { accessToken: admin } = await server.adminTokens()
    const json = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }
    await fetch(`${server.url}/device/thermostat-7`, { method: 'PUT', headers: json, body: JSON.stringify({ name: 'Thermostat', networkId: 1, deviceTypeId: 1 }) })
    // A token for the device alone: its commands and notifications, nothing else.
    const minted = await fetch(`${server.url}/token/create`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ userId: 1, actions: ['GetDeviceCommand', 'UpdateDeviceCommand', 'CreateDeviceNotification'], networkIds: ['1'], deviceTypeIds: ['1'] })
    })
    const { accessToken: token } = await minted.json() as { accessToken: string }
    const device = await runMqttDevice({ url: server.mqttUrl!, token, deviceId: 'thermostat-7', networkId: 1, deviceTypeId: 1 })
    try {
      const sent = await fetch(`${server.url}/device/thermostat-7/command`, { method: 'POST', headers: json, body: JSON.stringify({ command: 'set-target', parameters: { celsius: 21 } }) })
      const { id } = await sent.json() as { id: number }
      // Waits for the device's command/update (204 if none within 30 s).
      const update = await (await fetch(`${server.url}/device/thermostat-7/command/${id}/poll?waitTimeout=30`, { headers: json })).json() as { timestamp: string }
      await device.report(20.5)
      // The PUBACK says the broker took the reading; the poll waits until it is stored.
      const poll = `${server.url}/device/thermostat-7/notification/poll?names=temperature&timestamp=${update.timestamp}&waitTimeout=30`
      const notifications = await (await fetch(poll, { headers: json })).json() as unknown[]
      console.log('command', update, 'telemetry', notifications[0])
      return { update, notification: notifications[0] }
    } finally {
      await device.stop()
    }
  } finally {
    await server.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
