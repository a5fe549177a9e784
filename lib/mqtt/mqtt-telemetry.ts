/**
 * The telemetry publish path of one MQTT session: a publish on
 * `dh/notification/<networkId>/<deviceTypeId>/<deviceId>/<name>` read into a `notification/insert`
 * frame, and run under a principal verified at most once a second (not on every publish).
 */
import type { Principal } from '../core/auth/principal.js'
import { revokesPrincipal } from '../core/auth/revocations.js'
import type { DeviceHub } from '../core/devicehub.js'
import { readFrame } from '../http/inbound-frame.js'
import type { ActionSession } from '../http/websocket/action-session.js'
import type { ActionHandler } from '../http/websocket/actions.js'
import type { RequestFrame } from '../http/websocket/frames.js'
import { errorFrame, statusOf } from '../http/websocket/frames.js'

/**
 * How long a telemetry publisher's verified principal serves its next publishes: the read
 * cache's bound on staleness (lib/store/read-cache.ts), for changes made by another process that
 * send no `revoke` (the CLI on the same SQLite file). A `revoke` or `resync` drops it at once.
 */
const VERIFIED_FOR_MS = 1000

interface Verified {
  principal: Principal | undefined
  at: number
}

/** Where a telemetry publish comes from: parsed from its topic, or why the topic is refused. */
export type TelemetryTarget = { deviceId: string, name: string } | { error: string }

/** What the telemetry path needs of its session (mqtt-session.ts `MqttSession`). */
export interface TelemetryHost {
  readonly hub: DeviceHub
  /** The session actions run with. */
  readonly session: ActionSession
  readonly maxPacketBytes: number
  isClosed(): boolean
  /** The session's access token; undefined for a session without one (nothing to verify again). */
  token(): string | undefined
  principal(): Principal | undefined
  /** A fresh check of the token (D10); updates the session principal. */
  recheck(): Promise<Principal | undefined>
  /** Queues work behind the session's earlier requests and publishes. */
  enqueue(bytes: number, run: () => Promise<void>): void
  reply(action: string, frame: string): void
  /** Runs a telemetry frame as an action without a success reply (its errors are replied). */
  handle(frame: RequestFrame): Promise<void>
}

/** One session's telemetry: publishes read and queued, and the principal they run under. */
export class MqttTelemetry {
  /** The principal telemetry publishes last verified (see principal). */
  private verified: Verified | undefined
  /** Stops hearing `revoke` / `resync` (registered with the first verified telemetry publish). */
  private stopHearing: (() => void) | undefined
  /** `revoke` / `resync` events heard that concern this session. */
  private revocations = 0

  constructor (private readonly host: TelemetryHost) {}

  /**
   * Telemetry: a publish on `dh/notification/<networkId>/<deviceTypeId>/<deviceId>/<name>` is the
   * `notification/insert` action with the payload (a JSON object, or empty) as its parameters.
   */
  publish (target: TelemetryTarget, payload: Buffer): void {
    const host = this.host
    if (host.isClosed()) return
    const read = payload.length === 0
      ? { kind: 'json' as const, value: undefined, bytes: 0 }
      : readFrame(payload, { maxBytes: host.maxPacketBytes })
    host.enqueue(read.bytes, async () => {
      const action = 'notification/insert'
      if ('error' in target) {
        host.reply(action, errorFrame(action, null, 400, target.error))
        return
      }
      if (read.kind !== 'json' ||
        (read.value !== undefined && (read.value === null || typeof read.value !== 'object' || Array.isArray(read.value)))) {
        const message = read.kind === 'too-deep'
          ? read.message
          : 'The payload of a notification publish is a JSON object (its parameters)'
        host.reply(action, errorFrame(action, null, 400, message))
        return
      }
      const notification = { notification: target.name, ...(read.value === undefined ? {} : { parameters: read.value }) }
      await host.handle({ action, deviceId: target.deviceId, notification })
    })
  }

  /**
   * A telemetry publish under the principal verified for an earlier one; refused under it (401,
   * 403), it runs once more under a fresh check, so rights granted since count at once.
   */
  async run (handler: ActionHandler, frame: RequestFrame): Promise<object | undefined> {
    const { hub, session } = this.host
    const reused = this.verified !== undefined
    try {
      return await handler.run({ hub, session, principal: await this.principal() }, frame)
    } catch (error) {
      const code = statusOf(error)?.code
      if (!reused || (code !== 401 && code !== 403)) throw error
      this.verified = undefined
      return await handler.run({ hub, session, principal: await this.principal() }, frame)
    }
  }

  /** The verified principal no longer serves (the session authenticated again). */
  forget (): void {
    this.verified = undefined
  }

  /** The session is released: no more `revoke` / `resync` listening. */
  release (): void {
    this.stopHearing?.()
    this.verified = undefined
  }

  /**
   * D10 for telemetry, checked once per {@link VERIFIED_FOR_MS} instead of on every publish (a
   * device may publish hundreds a second): the principal verified last serves until its token
   * expires, a `revoke` names it or a `resync` says events were lost, whichever comes first.
   */
  private async principal (): Promise<Principal | undefined> {
    const host = this.host
    if (host.token() === undefined) return host.principal()
    const { hub } = host
    const verified = this.verified
    if (verified !== undefined && performance.now() - verified.at < VERIFIED_FOR_MS &&
      !expired(verified.principal, hub.clock.now())) {
      return verified.principal
    }
    this.verified = undefined
    // Work queued before a release may still run: a released session registers nothing (it would leak).
    if (host.isClosed()) return await host.recheck()
    this.stopHearing ??= hub.router.register({ kinds: [] }, (event) => {
      if (event.kind !== 'resync' && !(event.kind === 'revoke' && revokesPrincipal(event, host.principal()))) return
      this.verified = undefined
      this.revocations++
    })
    const at = performance.now()
    const before = this.revocations
    const principal = await host.recheck()
    // A revocation heard during the check may have come after the rows it read: not kept then.
    if (!host.isClosed() && this.revocations === before) this.verified = { principal, at }
    return principal
  }
}

/** Whether the token a principal was verified with has expired by `now` (the system principal never does). */
function expired (principal: Principal | undefined, now: number): boolean {
  return principal !== undefined && principal.kind !== 'system' && principal.token.e < now
}
