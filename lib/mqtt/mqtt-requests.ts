/**
 * The requests of one MQTT session: `dh/request` payloads read within the limits and queued in
 * arrival order, each run as the WebSocket API's action of the same name, its reply published to
 * `dh/response/<action>@<clientId>`. Telemetry publishes run here too (mqtt-telemetry.ts).
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Principal } from '../core/auth/principal.js'
import type { DeviceHub } from '../core/devicehub.js'
import { unauthorized } from '../core/errors.js'
import { readFrame } from '../http/inbound-frame.js'
import type { ActionSession } from '../http/websocket/action-session.js'
import type { ActionHandler } from '../http/websocket/actions.js'
import { ACTIONS } from '../http/websocket/actions.js'
import type { RequestFrame } from '../http/websocket/frames.js'
import { errorFrame, statusOf, successFrame } from '../http/websocket/frames.js'
import { SubscribeReply } from './mqtt-subscriptions.js'
import { REASON } from './mqtt5-reason-codes.js'

/** Where an unreadable request (bad JSON, too deep, no action) is answered. */
export const ERROR_ACTION = 'error'

const AUTHENTICATE: ActionHandler = { public: true, run: async () => undefined }

/** What the requests need of their session (mqtt-session.ts `MqttSession`). */
export interface RequestHost {
  readonly hub: DeviceHub
  readonly logger: FastifyBaseLogger
  /** The session actions run with. */
  readonly session: ActionSession
  readonly maxPacketBytes: number
  isClosed(): boolean
  principal(): Principal | undefined
  /** A fresh check of the token (D10); updates the session principal. */
  recheck(): Promise<Principal | undefined>
  /** `authenticate` verified `token`: it and its principal now hold the session. */
  authenticated(principal: Principal, token: string): void
  /** A telemetry frame's action, under the principal telemetry verified last (mqtt-telemetry.ts). */
  runTelemetry(handler: ActionHandler, frame: RequestFrame): Promise<object | undefined>
  /** Queues work behind the session's earlier requests and publishes. */
  enqueue(bytes: number, run: () => Promise<void>): void
  reply(action: string, frame: string): void
  cutOff(reason: string, reasonCode: number): void
}

/** One session's `dh/request` handling: read, queue, run, reply. */
export class MqttRequests {
  constructor (private readonly host: RequestHost) {}

  /** A `dh/request` payload: read within the limits, then queued behind earlier requests. */
  request (payload: Buffer): void {
    const host = this.host
    if (host.isClosed()) return
    const read = readFrame(payload, { maxBytes: host.maxPacketBytes })
    if (read.kind === 'too-big') {
      host.cutOff('request too big', REASON.packetTooLarge)
      return
    }
    host.enqueue(read.bytes, async () => {
      if (read.kind !== 'json') {
        host.reply(ERROR_ACTION, errorFrame(null, null, 400, read.kind === 'too-deep' ? read.message : 'Malformed Json received.'))
        return
      }
      const frame = read.value
      if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
        host.reply(ERROR_ACTION, errorFrame(null, null, 400, 'Malformed Json received.'))
        return
      }
      await this.handle(frame as RequestFrame)
    })
  }

  /**
   * Runs one action as the WebSocket session does; replies go to `dh/response/<action>@<clientId>`.
   * `telemetry`: the principal may be the one verified for an earlier publish (mqtt-telemetry.ts).
   */
  async handle (frame: RequestFrame, replyOnSuccess = true, telemetry = false): Promise<void> {
    const host = this.host
    const { action, requestId } = frame
    if (typeof action !== 'string') {
      host.reply(ERROR_ACTION, errorFrame(null, requestId, 400, '\'action\' field could not be parsed to known endpoint'))
      return
    }
    const handler = action === 'authenticate' ? AUTHENTICATE : Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined
    if (handler === undefined) {
      host.reply(action, errorFrame(action, requestId, 400, `Illegal argument: ${action}`))
      return
    }
    try {
      const result = action === 'authenticate'
        ? await this.authenticate(frame.token)
        : telemetry
          ? await host.runTelemetry(handler, frame)
          : await handler.run(
            { hub: host.hub, session: host.session, principal: handler.public === true ? host.principal() : await host.recheck() }, frame
          )
      const reply = result instanceof SubscribeReply ? { subscriptionId: result.subscriptionId } : result
      if (replyOnSuccess) host.reply(action, successFrame(action, requestId, reply))
      if (result instanceof SubscribeReply) result.start()
    } catch (error) {
      const known = statusOf(error)
      if (known === undefined) host.logger.error({ err: error, action }, 'mqtt action failed')
      host.reply(action, errorFrame(action, requestId, known?.code ?? 400, known?.message ?? 'Invalid request parameters'))
    }
  }

  /** `authenticate`: replaces the session principal, as over WebSocket. */
  private async authenticate (token: unknown): Promise<undefined> {
    if (typeof token !== 'string' || token === '') throw unauthorized()
    const result = await this.host.hub.tokens.verifyAccessToken(token)
    if ('failure' in result) throw unauthorized(result.failure === 'expired' ? 'Token expired' : 'Invalid credentials')
    await this.host.hub.tokens.noteSessionLogin(result.principal)
    this.host.authenticated(result.principal, token)
    return undefined
  }
}
