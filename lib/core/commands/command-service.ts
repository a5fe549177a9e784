/**
 * Device commands (spec §6.2-§6.8): query, get, insert, update, long polls and the wait for
 * a command's result. Inserts and updates ring the hub inside their transaction.
 */
import { Action } from '../auth/actions.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import type { ServiceContext } from '../context.js'
import { loadDeviceInScope } from '../devices/device-access.js'
import { badRequest, notFound } from '../errors.js'
import type { JsonObject } from '../ports.js'
import type { Cancellation } from '../realtime/cancellation.js'
import type { HubEvent } from '../realtime/hub.js'
import { longPoll } from '../realtime/long-poll.js'
import type { MessageSelector } from '../realtime/message-filter.js'
import { inMessageScope, nameSelected } from '../realtime/message-filter.js'
import { parseLimit, parseMessageQuery, parseNames, parsePathId, parseQueryTimestamp, parseWaitTimeout } from '../realtime/poll-params.js'
import type { PollTargets } from '../realtime/poll-scope.js'
import { resolvePollTargets } from '../realtime/poll-scope.js'
import { createSharedReader } from '../realtime/shared-read.js'
import { parseTimestamp } from '../time.js'
import { jsonObjectOrNull, requireBody } from '../validation.js'
import type { CommandRecord } from './command-ports.js'
import { commandExpired } from './command-ports.js'
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

export interface CommandInsertBody {
  command?: string
  timestamp?: unknown
  parameters?: unknown
  lifetime?: number | null
  status?: string | null
  result?: unknown
}

export interface CommandUpdateBody {
  status?: string | null
  result?: unknown
}

export interface CommandPollOptions {
  names?: string
  timestamp?: string
  waitTimeout?: number
  limit?: number
  returnUpdatedCommands?: boolean
  /** Ends the wait (client gone; an AbortSignal works); the poll then answers `[]`. */
  signal?: Cancellation
}

export interface CommandService {
  query(principal: Principal | undefined, input: CommandQueryInput): Promise<CommandView[]>
  get(principal: Principal | undefined, input: { deviceId: string, commandId: string, returnUpdatedCommands?: boolean }): Promise<CommandView>
  insert(principal: Principal | undefined, input: { deviceId: string, body: CommandInsertBody | undefined }): Promise<CommandInsertView>
  update(principal: Principal | undefined, input: { deviceId: string, commandId: string, body: CommandUpdateBody | undefined }): Promise<void>
  /** `GET /device/{deviceId}/command/poll`. */
  poll(principal: Principal | undefined, input: CommandPollOptions & { deviceId: string }): Promise<CommandView[]>
  /** `GET /device/command/poll`. */
  pollMany(principal: Principal | undefined, input: CommandPollOptions & PollTargets): Promise<CommandView[]>
  /** `GET /device/{deviceId}/command/{commandId}/poll`: the updated command, or null (204). */
  wait(principal: Principal | undefined, input: { deviceId: string, commandId: string, waitTimeout?: number, signal?: Cancellation }): Promise<CommandView | null>
}

const SORT_FIELDS = { timestamp: 'timestamp', command: 'command', status: 'status' } as const

function commandNotFound (id: string | number): Error {
  return notFound(`Command with id = ${id} not found`)
}

export function createCommandService (ctx: ServiceContext): CommandService {
  const { store, hub, clock } = ctx
  const shared = createSharedReader<CommandRecord | undefined>()
  const load = (event: HubEvent): Promise<CommandRecord | undefined> =>
    shared.read(event, () => store.commands.findById(event.id))

  async function runPoll (selector: MessageSelector, options: CommandPollOptions): Promise<CommandView[]> {
    const updated = options.returnUpdatedCommands === true
    const given = parseQueryTimestamp(options.timestamp)
    const limit = parseLimit(options.limit)
    const waitSeconds = parseWaitTimeout(options.waitTimeout)
    const kind = updated ? 'command-update' : 'command'
    // Fixed by the first backlog read: a `resync` reads the backlog again from the same point.
    let cursor: number | undefined
    // No await: a parked poll should not keep a suspended frame alive.
    return longPoll<CommandRecord>({
      hub,
      waitSeconds,
      signal: options.signal,
      waiters: ctx.waiters,
      routes: (event) => event.kind === kind && inMessageScope(selector, event) && nameSelected(selector.names, event.name),
      highWater: () => store.commands.highWater(),
      backlog: (mark) => {
        // No cursor = now; the message clock may run a little ahead of the wall clock.
        cursor ??= given ?? Math.max(clock.now(), mark.clock)
        return store.commands.backlog({ ...selector, after: cursor, limit, updated, now: clock.now() })
      },
      load,
      accepts: (c, mark) => {
        if (!inMessageScope(selector, c) || !nameSelected(selector.names, c.command)) return false
        if (updated) return c.isUpdated && (c.lastUpdated > cursor! || c.lastUpdated > mark.clock)
        return !commandExpired(c, clock.now()) && (c.id > mark.id || c.timestamp > cursor!)
      }
    }).then((items) => items.map(commandView))
  }

  return {
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
      const command = await store.commands.findById(id)
      if (command === undefined || command.deviceId !== input.deviceId) throw commandNotFound(input.commandId)
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
      if (typeof body.command !== 'string' || body.command === '') throw badRequest()
      const device = await loadDeviceInScope(store, principal, Action.CreateDeviceCommand, input.deviceId)
      const row = await store.transaction(async (tx) => {
        const inserted = await tx.commands.insert({
          command: body.command!,
          deviceId: device.id,
          networkId: device.networkId,
          deviceTypeId: device.deviceTypeId,
          // The token's user; a plugin token has none (spec §6.4), whoever owns the plugin.
          userId: principal.kind === 'user' ? principal.user.id : null,
          parameters,
          lifetime: body.lifetime ?? null,
          status: body.status ?? null,
          result,
          timestamp
        }, clock.now())
        await hub.publish({ kind: 'command', id: inserted.id, deviceId: inserted.deviceId, networkId: inserted.networkId, deviceTypeId: inserted.deviceTypeId, name: inserted.command }, tx)
        return inserted
      })
      return commandInsertView(row)
    },

    async update (principal, input) {
      await loadDeviceInScope(store, principal, Action.UpdateDeviceCommand, input.deviceId)
      const id = parsePathId(input.commandId, () => commandNotFound(input.commandId))
      const body = requireBody(input.body)
      const result = jsonObjectOrNull(body.result)
      const patch: { status?: string, result?: JsonObject } = {}
      if (typeof body.status === 'string') patch.status = body.status
      if (result !== undefined && result !== null) patch.result = result
      const row = await store.transaction(async (tx) => {
        const updated = await tx.commands.update(input.deviceId, id, patch, clock.now())
        if (updated === undefined) return undefined
        await hub.publish({ kind: 'command-update', id: updated.id, deviceId: updated.deviceId, networkId: updated.networkId, deviceTypeId: updated.deviceTypeId, name: updated.command }, tx)
        return updated
      })
      if (row === undefined) throw commandNotFound(input.commandId)
    },

    async poll (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceCommand, input.deviceId)
      return runPoll({ scope: principal!.scope, deviceIds: [input.deviceId], names: parseNames(input.names) }, input)
    },

    async pollMany (principal, input) {
      const names = parseNames(input.names)
      // Validate every parameter before deciding anything (§7.3 step 1).
      parseQueryTimestamp(input.timestamp)
      parseLimit(input.limit)
      parseWaitTimeout(input.waitTimeout)
      const targets = await resolvePollTargets(store, principal, Action.GetDeviceCommand, input)
      if (targets === undefined) return []
      return runPoll({ ...targets, names }, input)
    },

    async wait (principal, input) {
      await loadDeviceInScope(store, principal, Action.GetDeviceCommand, input.deviceId)
      const id = parsePathId(input.commandId, () => commandNotFound(input.commandId))
      const waitSeconds = parseWaitTimeout(input.waitTimeout)
      const items = await longPoll<CommandRecord>({
        hub,
        waitSeconds,
        signal: input.signal,
        waiters: ctx.waiters,
        routes: (event) => event.kind === 'command-update' && event.id === id,
        highWater: async () => ({ id: 0, clock: 0 }),
        backlog: async () => {
          const command = await store.commands.findById(id)
          // Unknown for this device: 204 at once (§6.8).
          if (command === undefined || command.deviceId !== input.deviceId) return null
          return command.isUpdated ? [command] : []
        },
        load,
        accepts: (c) => c.isUpdated && c.deviceId === input.deviceId
      })
      return items.length === 0 ? null : commandView(items[0]!)
    }
  }
}
