/**
 * MQTT over WebSocket on the HTTP port (`/mqtt` by default): the `ws` server the WebSocket API
 * already registered accepts the upgrade, and its socket becomes a stream (websocket-duplex.ts) the MQTT server reads
 * like a TCP connection (binary frames carry the MQTT packets, subprotocol `mqtt`).
 */
import type { FastifyInstance } from 'fastify'
import type { MqttServer } from './mqtt-server.js'
import { webSocketDuplex } from './websocket-duplex.js'

export const DEFAULT_MQTT_WEBSOCKET_PATH = '/mqtt'

/**
 * Adds the route to `app` (which must already have the WebSocket server: buildServer registers it).
 *
 * @example
 * installMqttWebSocketRoute(app, '/mqtt', mqtt)
 */
export function installMqttWebSocketRoute (app: FastifyInstance, path: string, mqtt: MqttServer): void {
  app.get(path, { websocket: true, schema: { hide: true } }, (socket, request) => {
    const stream = webSocketDuplex(socket)
    stream.on('error', () => stream.destroy())
    // request.ip: the client behind a trusted proxy, so CONNECT logins are throttled per client.
    mqtt.handle(stream, request.raw, request.ip)
  })
}
