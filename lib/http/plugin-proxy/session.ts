/**
 * One plugin proxy connection (contract §1-§3): parses frames, runs requests one at a time in
 * arrival order (batch elements included, P9) and answers each exactly once. Transport-neutral:
 * the WebSocket route hands it text and gives it `send` and `close`.
 */
import type { DeviceHub } from '../../core/devicehub.js'
import type { PluginConnection, PluginDeliveryItem, PluginMember } from '../../core/plugins/plugin-delivery.js'
import type { PluginAuthentication } from '../../core/plugins/plugin-proxy-auth.js'
import { ProxyMessages, ProxyRefusal, authenticatePluginToken } from '../../core/plugins/plugin-proxy-auth.js'
import type { PluginTokenPayload } from '../../core/auth/jwt.js'
import { PluginStatus } from '../../core/plugins/plugin-ports.js'
import { decodeLogCursor } from '../../core/realtime/log-cursor.js'
import type { FrameQueue } from '../frame-queue.js'
import { createFrameQueue } from '../frame-queue.js'
import type { InboundFrame } from '../inbound-frame.js'
import type { AuthenticatePayload, TopicPayload } from './messages.js'
import { HEALTH, encodeDelivery, encodeReply } from './messages.js'

export interface ProxySessionTransport {
  send(text: string): void
  /** Closes the connection with a WebSocket close code. */
  close(code: number, reason: string): void
  /** Resolves when the outbound buffer has room again; undefined = it has room now. */
  ready(): Promise<void> | undefined
  /** Stop and restart reading from the connection while many frames are queued (optional). */
  pause?(): void
  resume?(): void
}

export interface ProxySessionOptions {
  /** Frames received and not yet answered: one more closes the connection with 1008 (default 1,000). */
  maxPendingFrames?: number
}

export interface ProxySession {
  /** One frame, already bounded and parsed by `readFrame` (binary frames are read as UTF-8). */
  receive(frame: InboundFrame): void
  /** The connection closed: drops the subscription; the plugin's last connection sets it INACTIVE. */
  closed(): Promise<void>
  readonly authenticated: boolean
}

/** Close of a connection that queued more frames than it may. */
export const TOO_MANY_PENDING = { code: 1008, reason: 'Too many pending messages' } as const

/** Close code and reason when the plugin is deleted (P8). */
export const PLUGIN_GONE = { code: 1008, reason: ProxyMessages.notFound } as const

const INVALID_CURSOR = 'Payload property "c" should be a cursor received with a delivery'
const INVALID_GROUP = 'Payload property "sg" should be a string'

type Message = Record<string, unknown>

interface Binding {
  connection: PluginConnection
  topic: string
  payload: PluginTokenPayload
}

/**
 * @example
 * const session = createProxySession(hub, {
 *   send: (text) => socket.send(text), close: (c, r) => socket.close(c, r), ready: () => undefined
 * })
 * socket.on('message', (data) => session.receive(readFrame(data, { maxBytes: 64 * 1024 })))
 */
export function createProxySession (hub: DeviceHub, transport: ProxySessionTransport, options: ProxySessionOptions = {}): ProxySession {
  let binding: Binding | undefined
  let ended = false
  // Total: `handle` answers every failure itself; anything that still escapes closes only this connection.
  const queue: FrameQueue = createFrameQueue({
    maxPending: options.maxPendingFrames,
    onOverflow: () => transport.close(TOO_MANY_PENDING.code, TOO_MANY_PENDING.reason),
    onError (error) {
      hub.logger.error({ err: error }, 'plugin proxy frame failed')
      transport.close(1011, 'Internal error')
    },
    pause: () => transport.pause?.(),
    resume: () => transport.resume?.()
  })

  const member: PluginMember = {
    deliver (item: PluginDeliveryItem) {
      if (!ended && binding !== undefined) transport.send(encodeDelivery(binding.topic, item))
    },
    ready: () => ended ? undefined : transport.ready(),
    gone () {
      transport.close(PLUGIN_GONE.code, PLUGIN_GONE.reason)
    }
  }

  function reply (request: Message, s: 0 | 1, p?: unknown): void {
    if (!ended) transport.send(encodeReply(request, s, p))
  }

  function fail (request: Message, message: string): void {
    reply(request, 1, { m: message })
  }

  async function authenticate (request: Message): Promise<void> {
    const p = asObject(request.p)
    const auth: PluginAuthentication = await authenticatePluginToken({ auth: hub.tokens, clock: hub.clock, store: hub.store }, p?.token)
    // P3: one connection, one plugin.
    if (binding !== undefined && binding.connection.pluginId !== auth.plugin.id) throw new ProxyRefusal(ProxyMessages.noPermissions)
    if (binding === undefined) {
      const { connection } = await hub.pluginDelivery.connect(auth.plugin, member)
      if (ended) {
        await connection.close()
        return
      }
      binding = { connection, topic: auth.plugin.topicName, payload: auth.payload }
    } else {
      binding.payload = auth.payload
      if (auth.plugin.status !== PluginStatus.ACTIVE) await hub.pluginDelivery.update(auth.plugin, { status: PluginStatus.ACTIVE })
    }
    const payload: AuthenticatePayload = { e: auth.payload.e, t: auth.payload.t, tpc: auth.payload.tpc }
    reply(request, 0, payload)
  }

  /** Checks 1-4 of §3.3; returns the topic payload to echo. */
  function checkTopic (request: Message, bound: Binding, missing: string, expiry: boolean): string[] {
    const p = asObject(request.p)
    const topics = p?.t
    if (topics !== undefined && topics !== null && topics !== false && topics !== '' && topics !== 0) {
      if (!Array.isArray(topics) || topics.length !== 1 || topics[0] !== bound.topic) throw new ProxyRefusal(ProxyMessages.noPermissions)
    }
    if (!Array.isArray(topics)) throw new ProxyRefusal(missing)
    if (expiry && bound.payload.e < hub.clock.now()) throw new ProxyRefusal(ProxyMessages.expired)
    return [bound.topic]
  }

  async function topic (request: Message, bound: Binding): Promise<void> {
    const action = request.a
    if (action === 'subscribe') {
      const t = checkTopic(request, bound, 'Payload should consist property "t" with list of topics to subscribe', true)
      const p = asObject(request.p)!
      const sg = p.sg
      if (sg !== undefined && sg !== null && typeof sg !== 'string' && typeof sg !== 'number') throw new ProxyRefusal(INVALID_GROUP)
      const group = sg === undefined || sg === null || sg === '' ? undefined : String(sg)
      let after
      if (p.c !== undefined && p.c !== null) {
        after = decodeLogCursor(p.c)
        if (after === undefined) throw new ProxyRefusal(INVALID_CURSOR)
      }
      await bound.connection.subscribe({ group, after })
      const payload: TopicPayload = group === undefined ? { t } : { sg, t }
      return reply(request, 0, payload)
    }
    if (action === 'unsubscribe') {
      const t = checkTopic(request, bound, 'Payload should consist property "t" with list of topics to unsubscribe', false)
      bound.connection.unsubscribe()
      return reply(request, 0, { t })
    }
    if (action === 'create') {
      // P4: the topic exists with the plugin; nothing to create.
      const t = checkTopic(request, bound, 'Payload should consist an array with topics to create', true)
      return reply(request, 0, { t })
    }
    if (action === 'list') throw new ProxyRefusal(ProxyMessages.noPermissions)
    throw new ProxyRefusal(`Unsupported topic message action: ${render(action)}`)
  }

  async function handle (value: unknown): Promise<void> {
    // A non-object batch element counts as {}.
    const request = asObject(value) ?? {}
    try {
      const type = request.t
      if (type === 'health') return reply(request, 0, HEALTH)
      if (type === 'plugin') {
        if (request.a === 'authenticate') return await authenticate(request)
        throw new ProxyRefusal(`Unsupported plugin message action: ${render(request.a)}`)
      }
      const bound = binding
      if (bound === undefined) throw new ProxyRefusal(ProxyMessages.notAuthorized)
      if (type === 'topic') return await topic(request, bound)
      // P4: a plugin never publishes.
      if (type === 'notif') throw new ProxyRefusal(ProxyMessages.noPermissions)
      throw new ProxyRefusal(`Unsupported message type: ${render(type)}`)
    } catch (error) {
      if (error instanceof ProxyRefusal) return fail(request, error.message)
      hub.logger.error({ err: error }, 'plugin proxy request failed')
      return fail(request, 'Internal server error')
    }
  }

  async function frame (read: InboundFrame): Promise<void> {
    // Refused before parsing (too deep) or unparseable: `ack`, no id, the reason (3.4).
    if (read.kind === 'too-deep' || read.kind === 'malformed') return fail({}, read.message)
    if (read.kind !== 'json') return
    const value = read.value
    if (Array.isArray(value)) {
      // P9: in order, each on its own; an empty batch gets no reply.
      for (const element of value) {
        if (ended) return
        await handle(element)
      }
      return
    }
    await handle(value)
  }

  return {
    receive (read) {
      if (!ended) queue.push(read.bytes, async () => frame(read))
    },

    async closed () {
      if (ended) return
      ended = true
      // Wait for the request in progress: an authenticate may be binding right now.
      await queue.idle()
      await binding?.connection.close()
    },

    get authenticated () {
      return binding !== undefined
    }
  }
}

function asObject (value: unknown): Message | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Message : undefined
}

/** As JavaScript renders a value in a template string (`undefined` for a missing one). */
function render (value: unknown): string {
  if (value !== null && typeof value === 'object') {
    try {
      return String(value)
    } catch {
      return '[object Object]'
    }
  }
  return String(value)
}
