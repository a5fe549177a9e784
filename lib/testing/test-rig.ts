/**
 * `createTestRig()`: an in-memory devicehub on a free port for firmware and integration tests,
 * with an admin client, device handles, simulated devices, fault injection and a transcript.
 * Every helper goes through the public REST API, exactly as a device or client would.
 */
import { randomUUID } from 'node:crypto'
import { Action } from '../core/auth/actions.js'
import type { DeviceHub } from '../core/devicehub.js'
import type { JsonObject } from '../core/ports.js'
import { redactUrl } from '../http/build-server.js'
import { startServer } from '../start-server.js'
import type { RunningServer } from '../start-server.js'
import { createRestClient } from '../client/rest-client.js'
import type { RestClient } from '../client/rest-client.js'
import { createSimulatedDevice } from '../client/simulated-device.js'
import type { Behaviour, SimulatedDevice } from '../client/simulated-device.js'
import { createDeviceHandle } from './device-handle.js'
import type { DeviceHandle, DeviceHandleOptions } from './device-handle.js'
import { deviceOfRequest } from './device-of-request.js'
import { installFaults } from './faults.js'
import type { Faults } from './faults.js'
import { createTranscript } from './transcript.js'
import { recordWebSockets } from './websocket-transcript.js'

export interface TestRigOptions {
  /** `:memory:` (default), a SQLite file, or a `postgres://` URL. */
  db?: string
  /** Write every request, push, WebSocket frame and fault as JSON lines to this file (appended). */
  transcript?: string
  /** REST base path (default `/api/rest`). */
  basePath?: string
  /** Fastify logger options (default: silent). */
  logger?: boolean | { level: string }
}

export interface DeviceProps {
  name?: string
  data?: JsonObject | null
  networkId?: number
  deviceTypeId?: number
}

export interface SimulateProps extends DeviceProps {
  /** How the device talks: REST long polls (default) or one WebSocket. */
  transport?: 'rest' | 'websocket'
}

/** A device answered by an in-process handler: a {@link DeviceHandle} that also answers commands. */
export interface SimulatedDeviceHandle extends DeviceHandle {
  /** Commands answered so far; `command()` resolves only once the device's answer is counted here. */
  readonly handled: number
  /** Stops answering (also done by `rig.close()`). */
  stop(): Promise<void>
}

export interface TestRig {
  /** REST base URL, e.g. `http://127.0.0.1:40123/api/rest`. */
  readonly url: string
  /** The WebSocket URL `/info` reports. */
  readonly webSocketUrl: string
  /** `mqtt://127.0.0.1:<port>`: DeviceHive's MQTT protocol (docs/mqtt.md) on a free port. */
  readonly mqttUrl: string
  /** `ws://127.0.0.1:<port>/mqtt`: the same over WebSocket. */
  readonly mqttWebSocketUrl: string
  readonly port: number
  /** A client holding an admin token. */
  readonly admin: RestClient
  readonly adminToken: string
  /** The server's core, for assertions beyond the API. */
  readonly hub: DeviceHub
  readonly faults: Faults
  /** Registers (or updates) a device and returns a handle with its own device-scoped token. */
  device(id: string, props?: DeviceProps): Promise<DeviceHandle>
  /** Registers a device that answers its commands through `behaviour`, in process. */
  simulateDevice(id: string, behaviour: Behaviour, props?: SimulateProps): Promise<SimulatedDeviceHandle>
  /** Stops simulated devices and feeds, closes the server and the transcript. Idempotent. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** What a device-scoped token may do: what firmware does, nothing else. */
const DEVICE_ACTIONS = [
  Action.GetDevice,
  Action.RegisterDevice,
  Action.GetDeviceCommand,
  Action.UpdateDeviceCommand,
  Action.GetDeviceNotification,
  Action.CreateDeviceNotification
]

/**
 * @example
 * const rig = await createTestRig()
 * const lamp = await rig.simulateDevice('lamp-1', { on: () => ({ lit: true }) })
 * const done = await lamp.command('on', {}, { timeout: 2000 })   // done.result = { lit: true }
 * await rig.close()
 */
export async function createTestRig (options: TestRigOptions = {}): Promise<TestRig> {
  const transcript = createTranscript(options.transcript)
  // Marks the rig's own requests, which faults leave alone.
  const rigHeader = { 'x-devicehub-rig': randomUUID() }
  let faults: Faults | undefined
  /** Device tokens the rig minted, so faults can tell a WebSocket's device. */
  const deviceTokens = new Map<string, string>()
  let server: RunningServer
  try {
    server = await startServer({
      db: options.db ?? ':memory:',
      port: 0,
      mqtt: { port: 0 },
      basePath: options.basePath,
      logger: options.logger ?? false,
      configure (app) {
        // Before the faults: a push they drop is not recorded as sent, a delayed one when it leaves.
        recordWebSockets(app, { transcript, deviceOfToken: (token) => deviceTokens.get(token) })
        faults = installFaults(app, {
          transcript,
          exempt: (request) => request.headers['x-devicehub-rig'] === rigHeader['x-devicehub-rig'],
          deviceOfToken: (token) => deviceTokens.get(token)
        })
        app.addHook('onResponse', async (request, reply) => {
          const device = deviceOfRequest(request.url)
          transcript.write({
            type: 'request', method: request.method, url: redactUrl(request.url), status: reply.statusCode,
            ms: Math.round(reply.elapsedTime), device
          })
        })
      }
    })
  } catch (error) {
    await transcript.close()
    throw error
  }
  const tokens = await server.adminTokens()
  const admin = createRestClient({ url: server.url, ...tokens, headers: rigHeader })
  const info = await admin.info()
  const handles: DeviceHandle[] = []
  const simulated: Array<{ stop: () => Promise<void> }> = []
  let closing: Promise<void> | undefined

  async function device (id: string, props: DeviceProps = {}, answered?: DeviceHandleOptions['answered']): Promise<DeviceHandle> {
    const since = (await admin.info()).serverTimestamp
    await admin.putDevice(id, { name: props.name ?? id, data: props.data, networkId: props.networkId, deviceTypeId: props.deviceTypeId })
    const registered = await admin.request<{ networkId: number, deviceTypeId: number }>('GET', `/device/${encodeURIComponent(id)}`)
    const minted = await admin.request<{ accessToken: string, refreshToken: string }>('POST', '/token/create', {
      body: {
        userId: 1,
        actions: DEVICE_ACTIONS,
        networkIds: [String(registered.networkId)],
        deviceTypeIds: [String(registered.deviceTypeId)]
      }
    })
    deviceTokens.set(minted.accessToken, id)
    const handle = createDeviceHandle({
      id,
      since,
      tokens: minted,
      networkId: registered.networkId,
      deviceTypeId: registered.deviceTypeId,
      admin,
      url: server.url,
      webSocketUrl: info.webSocketServerUrl ?? '',
      answered
    })
    handles.push(handle)
    return handle
  }

  const rig: TestRig = {
    url: server.url,
    webSocketUrl: info.webSocketServerUrl ?? '',
    mqttUrl: server.mqttUrl ?? '',
    mqttWebSocketUrl: server.mqttWebSocketUrl ?? '',
    port: server.port,
    admin,
    adminToken: tokens.accessToken,
    hub: server.hub,
    faults: faults!,
    device: (id, props) => device(id, props),
    async simulateDevice (id, behaviour, props = {}) {
      const { transport, ...deviceProps } = props
      // `command()` resolves once the device has its update's answer too: `handled` counts it then.
      const answering: { sim?: SimulatedDevice } = {}
      const handle = await device(
        id, deviceProps, (commandId, signal) => answering.sim?.whenAnswered(commandId, signal) ?? Promise.resolve()
      )
      const sim = answering.sim = createSimulatedDevice({
        client: handle.client,
        deviceId: id,
        behaviour,
        since: handle.since,
        transport,
        webSocketUrl: handle.urls.webSocket,
        token: handle.accessToken
      })
      await sim.start()
      simulated.push(sim)
      return Object.create(handle, {
        handled: { get: () => sim.handled, enumerable: true },
        stop: { value: () => sim.stop() }
      }) as SimulatedDeviceHandle
    },
    close () {
      closing ??= (async () => {
        faults?.clear()
        await Promise.all([...simulated.map((s) => s.stop()), ...handles.map((h) => h.close())])
        await server.close()
        await transcript.close()
      })()
      return closing
    },
    [Symbol.asyncDispose]: () => rig.close()
  }
  return rig
}
