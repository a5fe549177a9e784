/**
 * Device commands (spec §6.2-§6.8): query, get, insert, update, long polls and the wait for
 * a command's result. Inserts and updates are appended to the message log (message-log.ts), which announces them.
 */
import { Action } from '../auth/actions.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import type { ServiceContext } from '../context.js'
import { loadDeviceInScope } from '../devices/device-access.js'
import type { DeviceRecord } from '../devices/device-ports.js'
import { badRequest, notFound } from '../errors.js'
import type { Cancellation } from '../realtime/cancellation.js'
import type { LogCursor } from '../realtime/log-cursor.js'
import { cursorAtClock } from '../realtime/log-cursor.js'
import { longPoll } from '../realtime/long-poll.js'
import type { MessageSelector } from '../realtime/message-filter.js'
import { namesOf, parseLimit, parseMessageQuery, parsePathId, parseWaitTimeout } from '../realtime/poll-params.js'
import type { PollTargets } from '../realtime/poll-scope.js'
import { resolvePollTargets } from '../realtime/poll-scope.js'
import { createEventLoader } from '../realtime/shared-read.js'
import { sharedViews } from '../realtime/shared-view.js'
import type { MessageStream } from '../realtime/message-stream.js'
import { openMessageStream } from '../realtime/message-stream.js'
import { createStreamSpec } from '../realtime/message-stream-spec.js'
import type { SubscribeTargets } from '../realtime/subscribe-scope.js'
import { resolveSubscribeTargets } from '../realtime/subscribe-scope.js'
import { parseTimestamp } from '../time.js'
import { jsonObjectOrNull, optionalInteger, optionalString, requireBody } from '../validation.js'
import type { CommandPatch, CommandRecord, NewCommand } from './command-ports.js'
import type { CommandInsertBody, CommandUpdateBody } from './command-schemas.js'
import type { CommandInsertView, CommandView } from './command-views.js'
import { commandInsertView, commandView } from './command-views.js'

export interface CommandQueryInput {
  deviceId: string
  start?: string
  end?: string
  command?: string
  status?: string
  sortField?: string
  sortOrder?: string
  take?: number
  skip?: number
}

export type { CommandInsertBody, CommandUpdateBody } from './command-schemas.js'

/** Typed poll options; the REST adapter parses the query's CSV and timestamp text into these. */
export interface CommandPollOptions {
  /** Exact names; absent or empty = every name. */
  names?: readonly string[]
  /** Cursor (epoch ms): commands strictly after it; absent = from now. */
  timestamp?: number
  waitTimeout?: number
  limit?: number
  returnUpdatedCommands?: boolean
  /** Ends the wait (client gone; an AbortSignal works); the poll then answers `[]`. */
  signal?: Cancellation
}

/** Typed input of {@link CommandService.subscribe}. */
export interface CommandSubscribeInput extends SubscribeTargets {
  /** Backlog: commands strictly after this epoch-ms cursor (`lastUpdated` for updates); absent = live only. */
  after?: number
  /** Most backlog items (default 20, the WebSocket `limit`; `Infinity` to resume everything). */
  backlogLimit?: number
  /** Deliver only updates of commands (by `lastUpdated`) instead of inserts. */
  returnUpdatedCommands?: boolean
}

export interface CommandService {
  /**
   * A continuous stream of inserted (or, with `returnUpdatedCommands`, updated) commands: the
   * backlog after `after`, then live ones, in order, none lost or repeated (R9).
   *
   * @example
   * const stream = await hub.commands.subscribe(principal, { deviceId: 'd1' })
   * stream.start(({ item }) => send(item))
   */
  subscribe(principal: Principal | undefined, input: CommandSubscribeInput): Promise<MessageStream<CommandView>>
  query(principal: Principal | undefined, input: CommandQueryInput): Promise<CommandView[]>
  get(
    principal: Principal | undefined, input: { deviceId: string, commandId: string, returnUpdatedCommands?: boolean }
  ): Promise<CommandView>
  insert(principal: Principal | undefined, input: { deviceId: string, body: CommandInsertBody | undefined }): Promise<CommandInsertView>
  /** `parameters`, when given (the MQTT endpoint's `command/update`), replaces the command's; REST and WebSocket never give it (§6.6). */
  update(
    principal: Principal | undefined,
    input: { deviceId: string, commandId: string, body: CommandUpdateBody | undefined, parameters?: unknown }
  ): Promise<void>
  /** `GET /device/{deviceId}/command/poll`. */
  poll(principal: Principal | undefined, input: CommandPollOptions & { deviceId: string }): Promise<CommandView[]>
  /** `GET /device/command/poll`. */
  pollMany(principal: Principal | undefined, input: CommandPollOptions & PollTargets): Promise<CommandView[]>
  /** `GET /device/{deviceId}/command/{commandId}/poll`: the updated command, or null (204). */
  wait(
    principal: Principal | undefined, input: { deviceId: string, commandId: string, waitTimeout?: number, signal?: Cancellation }
  ): Promise<CommandView | null>
}

const SORT_FIELDS = { timestamp: 'timestamp', command: 'command', status: 'status' } as const

/** Default backlog of a command subscription (`limit`, auth spec §6.7). */
const SUBSCRIBE_BACKLOG = 20

/** One view per record, shared by every stream the record is delivered to. */
const sharedView = sharedViews(commandView)

function commandNotFound (id: string | number): Error {
  return notFound(`Command with id = ${id} not found`)
}

export function createCommandService (ctx: ServiceContext): CommandService {
  const { store, log } = ctx
  const load = createEventLoader<CommandRecord>((id) => store.commands.findById(id))

  /** A poll is the first batch of a stream: the backlog after the cursor (up to `limit`), else the first live one. */
  function runPoll (principal: Principal | undefined, selector: MessageSelector, options: CommandPollOptions): Promise<CommandView[]> {
    const limit = parseLimit(options.limit, ctx.limits.maxTake)
    const waitSeconds = parseWaitTimeout(options.waitTimeout)
    if (options.signal?.aborted === true || ctx.waiters.closed) return Promise.resolve([])
    const kind = options.returnUpdatedCommands === true ? 'command-update' : 'command'
    const after = options.timestamp === undefined ? undefined : cursorAtClock(options.timestamp)
    const spec = createStreamSpec(ctx, kind, { selector, principal, load, view: sharedView, after, backlogLimit: limit, pageSize: limit })
    // No await: a parked poll should not keep a suspended frame alive.
    return openMessageStream(spec).then((stream) => longPoll(stream, { waitSeconds, signal: options.signal }))
  }

  /**
   * Command `id`'s update from the log's memory: the device's one update released after the
   * command's insert `stamp`, when it is this command's, of the device as stored now (a device
   * deleted on another instance and made again under its id has other commands).
   */
  const rememberedUpdate = (device: DeviceRecord, id: number, stamp: number): CommandRecord | undefined => {
    const [update] = ctx.log.knownAfter('command-update', device.id, stamp) ?? []
    if (update === undefined || update.id !== id) return undefined
    return update.networkId === device.networkId && update.deviceTypeId === device.deviceTypeId ? update : undefined
  }

  return {
    async subscribe (principal, input) {
      const selector = await resolveSubscribeTargets(store, principal, Action.GetDeviceCommand, input)
      const kind = input.returnUpdatedCommands === true ? 'command-update' : 'command'
      const after = input.after === undefined ? undefined : cursorAtClock(input.after)
      // A device listening for its own commands (one device, inserts) is present while the stream is open.
      const device = kind === 'command' && selector.deviceIds?.length === 1 ? input.deviceId : undefined
      let present: (() => void) | undefined
      const stream = await openMessageStream(createStreamSpec(ctx, kind, {
        selector,
        principal,
        load,
        view: sharedView,
        after,
        backlogLimit: input.backlogLimit ?? SUBSCRIBE_BACKLOG,
        // Every way a stream ends (client, shutdown, error) closes it once.
        onClose: () => present?.()
      }))
      if (device !== undefined && !stream.closed) present = ctx.presence.connectionOpened(device)
      return stream
    },

    async query (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceCommand, input.deviceId)
      const rows = await store.commands.query({
        scope: principal!.scope,
        deviceIds: [input.deviceId],
        command: input.command === '' ? undefined : input.command,
        status: input.status === '' ? undefined : input.status,
        ...parseMessageQuery(input, SORT_FIELDS, ctx.limits.maxTake)
      })
      return rows.map(commandView)
    },

    async get (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceCommand, input.deviceId)
      const id = parsePathId(input.commandId, () => commandNotFound(input.commandId))
      const command = await store.commands.findForDevice(input.deviceId, id)
      if (command === undefined) throw commandNotFound(input.commandId)
      if (input.returnUpdatedCommands === true && !command.isUpdated) throw commandNotFound(input.commandId)
      return commandView(command)
    },

    async insert (principal, input) {
      requireAction(principal, Action.CreateDeviceCommand)
      const body = requireBody(input.body)
      const parameters = jsonObjectOrNull(body.parameters) ?? null
      const result = jsonObjectOrNull(body.result) ?? null
      const timestamp = parseTimestamp(body.timestamp)
      if (timestamp === null) throw badRequest()
      // R4: a command needs a name.
      if (typeof body.command !== 'string' || body.command === '' || body.command.length > 128) throw badRequest()
      // Finite and in range before anything is stored (issue #16: `lifetime: "Infinity"`).
      const lifetime = optionalInteger(body.lifetime, 0, 2_147_483_647)
      const status = optionalString(body.status, 128)
      const device = await loadDeviceInScope(store, principal, Action.CreateDeviceCommand, input.deviceId)
      const command: NewCommand = {
        command: body.command,
        deviceId: device.id,
        networkId: device.networkId,
        deviceTypeId: device.deviceTypeId,
        // The token's user; a plugin token has none (spec §6.4), whoever owns the plugin.
        userId: principal.kind === 'user' ? principal.user.id : null,
        parameters,
        lifetime,
        status,
        result,
        timestamp
      }
      return commandInsertView(await log.append({ kind: 'command', input: command }))
    },

    async update (principal, input) {
      await loadDeviceInScope(store, principal, Action.UpdateDeviceCommand, input.deviceId)
      // Only the device updates its commands: device-authored activity.
      await ctx.presence.seen(input.deviceId)
      const id = parsePathId(input.commandId, () => commandNotFound(input.commandId))
      const body = requireBody(input.body)
      const result = jsonObjectOrNull(body.result)
      const patch: CommandPatch = {}
      const status = optionalString(body.status, 128)
      if (status !== null) patch.status = status
      if (result !== undefined && result !== null) patch.result = result
      if (input.parameters !== undefined) patch.parameters = jsonObjectOrNull(input.parameters) ?? null
      const row = await log.append({ kind: 'command-update', deviceId: input.deviceId, id, patch })
      if (row === undefined) throw commandNotFound(input.commandId)
    },

    async poll (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceCommand, input.deviceId)
      // A device waiting for its own commands is present.
      await ctx.presence.seen(input.deviceId)
      return runPoll(principal, { scope: principal!.scope, deviceIds: [input.deviceId], names: namesOf(input.names) }, input)
    },

    async pollMany (principal, input) {
      const names = namesOf(input.names)
      // Validate every parameter before deciding anything (§7.3 step 1).
      parseLimit(input.limit, ctx.limits.maxTake)
      parseWaitTimeout(input.waitTimeout)
      const targets = await resolvePollTargets(store, principal, Action.GetDeviceCommand, input)
      if (targets === undefined) return []
      return runPoll(principal, { ...targets, names }, input)
    },

    async wait (principal, input) {
      const device = await loadDeviceInScope(store, principal, Action.GetDeviceCommand, input.deviceId)
      const id = parsePathId(input.commandId, () => commandNotFound(input.commandId))
      const waitSeconds = parseWaitTimeout(input.waitTimeout)
      if (input.signal?.aborted === true || ctx.waiters.closed) return null
      // Register first, then look: the lookup is the stream's mark. An update committed after it
      // is stamped later and arrives live; one committed before it is seen by the lookup. A
      // command the bus released lately needs no lookup (unanswered-commands.ts): unanswered, an
      // update released after that arrives live; answered, the log's memory may hold its update.
      let found: CommandRecord | 'pending' | undefined
      const openMark = async (): Promise<LogCursor> => {
        let heard = ctx.unansweredCommands.heard(id, input.deviceId)
        if (heard === undefined) {
          // Its insert may be this process's own, acknowledged and not yet released (on
          // PostgreSQL it follows the foreign writes drawn before it): the client's usual order.
          await ctx.log.caughtUp()
          heard = ctx.unansweredCommands.heard(id, input.deviceId)
        }
        if (heard !== undefined && !heard.answered) {
          found = 'pending'
          return cursorAtClock(heard.stamp)
        }
        const update = heard === undefined ? undefined : rememberedUpdate(device, id, heard.stamp)
        const command = update ?? await store.commands.findForDevice(input.deviceId, id)
        found = command === undefined ? undefined : command.isUpdated ? command : 'pending'
        // Not `lastUpdated`: before the first update it is the insert's `timestamp`, which a
        // client may have set to any time. Every update is stamped later than the insert's stamp.
        return cursorAtClock(command === undefined ? Number.MAX_SAFE_INTEGER : command.isUpdated ? command.lastUpdated : command.stamp)
      }
      const selector: MessageSelector = { scope: principal!.scope, deviceIds: [input.deviceId] }
      const stream = await openMessageStream(createStreamSpec(ctx, 'command-update', {
        selector, principal, load, view: sharedView, backlogLimit: 0, commandId: id, openMark
      }))
      const state = found as CommandRecord | 'pending' | undefined
      // Unknown for this device: 204 at once (§6.8); already updated: at once.
      if (state !== 'pending') {
        stream.close()
        return state === undefined ? null : commandView(state)
      }
      const items = await longPoll(stream, { waitSeconds, signal: input.signal })
      return items.length === 0 ? null : items[0]!
    }
  }
}
