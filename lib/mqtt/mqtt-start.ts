/**
 * The MQTT endpoint of `startServer()`: created before the app listens (its WebSocket route must
 * exist then), listening on its TCP port after the HTTP port. A busy *default* port is a warning
 * (MQTT then runs over WebSocket only); a busy port the operator chose is an error that stops the
 * start. The server's shutdown closes it first, so no MQTT client outlives the hub.
 */
import type { FastifyInstance } from 'fastify'
import type { DeviceHub } from '../core/devicehub.js'
import type { MqttLimits } from './mqtt-limits.js'
import type { MqttServer } from './mqtt-server.js'
import { createMqttServer } from './mqtt-server.js'
import { DEFAULT_MQTT_WEBSOCKET_PATH, installMqttWebSocketRoute } from './mqtt-websocket.js'

/** The IANA port of MQTT. */
export const DEFAULT_MQTT_PORT = 1883

export interface MqttStartOptions {
  /**
   * TCP port; 0 picks a free one; false = no TCP listener (MQTT over WebSocket only). Absent =
   * {@link DEFAULT_MQTT_PORT}, and then a busy port is a warning rather than an error.
   */
  port?: number | false
  /** Interface (default: the HTTP server's host). */
  host?: string
  /** Path of MQTT over WebSocket on the HTTP port (default `/mqtt`); false = none. */
  webSocketPath?: string | false
  limits?: Partial<MqttLimits>
}

export interface StartedMqtt {
  readonly server: MqttServer
  /** `/mqtt`, or undefined when MQTT over WebSocket is off. */
  readonly webSocketPath: string | undefined
  /** Warnings for the banner (a busy default port). */
  readonly warnings: string[]
  /** Binds the TCP port (see the module comment for a busy one). */
  listen(): Promise<void>
  /** `mqtt://host:port` once listening; undefined without a TCP listener. */
  url(): string | undefined
}

function isAddressInUse (error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'EADDRINUSE'
}

/**
 * @example
 * const mqtt = await startMqtt(app, hub, { port: 0 }, { host: '127.0.0.1', restServerUrl: () => url })
 * await app.listen({ port: 0 })
 * await mqtt.listen()
 */
export async function startMqtt (
  app: FastifyInstance,
  hub: DeviceHub,
  options: MqttStartOptions,
  context: { host: string, restServerUrl: () => string }
): Promise<StartedMqtt> {
  const server = await createMqttServer({ hub, logger: app.log, restServerUrl: context.restServerUrl, limits: options.limits })
  // preClose: clients go before the HTTP server and the hub close.
  app.addHook('preClose', async () => server.close())
  const webSocketPath = options.webSocketPath === false ? undefined : options.webSocketPath ?? DEFAULT_MQTT_WEBSOCKET_PATH
  if (webSocketPath !== undefined) installMqttWebSocketRoute(app, webSocketPath, server)
  const host = options.host ?? context.host
  const warnings: string[] = []
  return {
    server,
    webSocketPath,
    warnings,
    async listen () {
      if (options.port === false) return
      const port = options.port ?? DEFAULT_MQTT_PORT
      try {
        await server.listen(port, host)
      } catch (error) {
        if (isAddressInUse(error) && options.port === undefined) {
          const warning = `MQTT port ${port} (the default) is in use: no MQTT listener` +
            (webSocketPath === undefined ? '' : ` (MQTT over WebSocket at ${webSocketPath} still works)`) +
            '; choose one with --mqtt-port (DEVICEHUB_MQTT_PORT), or --mqtt-port off'
          app.log.warn(warning)
          warnings.push(warning)
          return
        }
        if (isAddressInUse(error)) {
          throw new Error(`MQTT port ${port} is in use (--mqtt-port / DEVICEHUB_MQTT_PORT): choose another, or off`)
        }
        throw error
      }
    },
    url () {
      const address = server.address
      if (address === undefined) return undefined
      const shown = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host
      return `mqtt://${shown}:${address.port}`
    }
  }
}
