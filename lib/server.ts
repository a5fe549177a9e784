/**
 * `devicehub/server`: one call from nothing to a listening server (store, hub, Fastify app,
 * PostgreSQL doorbell for `postgres://` URLs), as `devicehub serve` runs it.
 *
 * @example
 * import { startServer } from 'devicehub/server'
 * const server = await startServer({ db: ':memory:', port: 0 })
 */
export { startServer } from './start-server.js'
export type { RunningServer, StartServerOptions } from './start-server.js'
export type { MqttStartOptions } from './mqtt/mqtt-start.js'
export type { MqttLimits } from './mqtt/mqtt-limits.js'
export type { MqttServer } from './mqtt/mqtt-server.js'
