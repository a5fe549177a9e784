/**
 * Networks and device types follow the same rules (spec §5.6, §5.7): scoped lists and counts,
 * reads with the devices of the other dimension, create with a unique name, partial update,
 * delete that refuses while devices remain unless forced (then cascades, §8). One factory
 * serves both; only the texts, actions and scope dimension differ.
 */
import { Action } from '../auth/actions.js'
import { requireDeviceTypeTarget, requireNetworkTarget } from '../auth/access.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { revokeUser } from '../auth/revocations.js'
import type { ServiceContext } from '../context.js'
import type { DeviceRecord } from '../devices/device-ports.js'
import { DeviceHubError, badRequest, forbidden, notFound } from '../errors.js'
import type { DataScope, Store } from '../ports.js'
import { requireBody, validationMessage } from '../validation.js'
import type { ListQueryInput } from './list-query.js'
import { parseListQuery } from './list-query.js'
import type { NetworkRecord, NetworkRepository } from './network-ports.js'
import type { EmbeddedDeviceView, NamedEntityBody, NamedEntityView, NamedEntityWithDevices } from './network-schemas.js'

export type { EmbeddedDeviceView, NamedEntityBody, NamedEntityView, NamedEntityWithDevices } from './network-schemas.js'

export interface NamedEntityListInput extends ListQueryInput {
  name?: string
  namePattern?: string
}

export interface NamedEntityService {
  list(principal: Principal | undefined, input: NamedEntityListInput): Promise<NamedEntityView[]>
  count(principal: Principal | undefined, input: NamedEntityListInput): Promise<{ count: number }>
  get(principal: Principal | undefined, id: number): Promise<NamedEntityWithDevices>
  create(principal: Principal | undefined, body: NamedEntityBody | undefined): Promise<{ id: number }>
  update(principal: Principal | undefined, id: number, body: NamedEntityBody | undefined): Promise<void>
  delete(principal: Principal | undefined, id: number, force: boolean): Promise<void>
}

export interface NamedEntityKind {
  getAction: Action
  manageAction: Action
  repository: (store: Store) => NetworkRepository
  /** The scope dimension of this entity. */
  ids: (scope: DataScope) => 'all' | readonly number[]
  /** Scope of the embedded devices: this entity, limited by the other dimension. */
  deviceScope: (scope: DataScope, id: number) => DataScope
  /** §4.2 steps 3-4: the token must name this id (or all), else 403 whether or not it exists. */
  requireTarget: (principal: Principal, id: number) => void
  notFound: (id: number) => string
  duplicate: string
  hasDevices: (ids: string) => string
  /** The users whose rights the entity's deletion takes away (clients that had it assigned). */
  holders: (store: Store, id: number) => Promise<number[]>
}

export const NetworkKind: NamedEntityKind = {
  getAction: Action.GetNetwork,
  manageAction: Action.ManageNetwork,
  repository: (store) => store.networks,
  ids: (scope) => scope.networkIds,
  deviceScope: (scope, id) => ({ networkIds: [id], deviceTypeIds: scope.deviceTypeIds }),
  requireTarget: requireNetworkTarget,
  notFound: (id) => `Network with id = ${id} not found`,
  duplicate: 'Network cannot be created. Network with such name already exists',
  hasDevices: (ids) => `There are the following devices within this network: ${ids}. Please review and delete them first.`,
  holders: (store, id) => store.users.clientsOfNetwork(id)
}

export const DeviceTypeKind: NamedEntityKind = {
  getAction: Action.GetDeviceType,
  manageAction: Action.ManageDeviceType,
  repository: (store) => store.deviceTypes,
  ids: (scope) => scope.deviceTypeIds,
  deviceScope: (scope, id) => ({ networkIds: scope.networkIds, deviceTypeIds: [id] }),
  requireTarget: requireDeviceTypeTarget,
  notFound: (id) => `Device type with id = ${id} not found`,
  duplicate: 'Device type cannot be created. Device type with such name already exists',
  hasDevices: (ids) => `There are the following devices within this device type: ${ids}. Please review and delete them first.`,
  holders: (store, id) => store.users.clientsOfDeviceType(id)
}

const SORT_FIELDS = { id: 'id', name: 'name' } as const
const NAME_MESSAGE = 'Field cannot be empty. The length of name should not be more than 128 symbols.'
const DESCRIPTION_MESSAGE = 'The length of description should not be more than 128 symbols.'

export function toNamedEntityView (row: NetworkRecord): NamedEntityView {
  return { id: row.id, name: row.name, description: row.description }
}

export function toEmbeddedDevice (device: DeviceRecord): EmbeddedDeviceView {
  return { id: device.id, name: device.name, data: device.data, isBlocked: device.isBlocked }
}

function allows (ids: 'all' | readonly number[], id: number): boolean {
  return ids === 'all' || ids.includes(id)
}

function checkName (value: unknown): string {
  if (typeof value !== 'string' || value.length < 1 || value.length > 128) {
    throw badRequest(validationMessage([{
      property: 'name', value, message: value === undefined || value === null ? 'name field cannot be null.' : NAME_MESSAGE
    }]))
  }
  return value
}

function checkDescription (value: unknown): string | null | undefined {
  if (value === undefined || value === null) return value
  if (typeof value !== 'string' || value.length > 128) {
    throw badRequest(validationMessage([{ property: 'description', value, message: DESCRIPTION_MESSAGE }]))
  }
  return value
}

/**
 * @example
 * const networks = createNamedEntityService(ctx, NetworkKind)
 * await networks.create(principal, { name: 'Lab' }) // { id: 2 }
 */
export function createNamedEntityService (ctx: ServiceContext, kind: NamedEntityKind): NamedEntityService {
  const repo = (): NetworkRepository => kind.repository(ctx.store)

  /**
   * The target check (403 when the token does not name the id), then a row the caller may see,
   * else the not-found error (missing and outside the data scope alike, §4.3).
   */
  async function loadVisible (principal: Principal, id: number): Promise<NetworkRecord> {
    kind.requireTarget(principal, id)
    const row = allows(kind.ids(principal.scope), id) ? await repo().findById(id) : undefined
    if (row === undefined) throw notFound(kind.notFound(id))
    return row
  }

  async function refuseDuplicate (name: string, exceptId?: number): Promise<void> {
    const existing = await repo().findByName(name)
    if (existing !== undefined && existing.id !== exceptId) throw forbidden(kind.duplicate)
  }

  function rethrowConflict (error: unknown): never {
    if (error instanceof DeviceHubError && error.code === 'CONFLICT') throw forbidden(kind.duplicate)
    throw error
  }

  function filterOf (input: NamedEntityListInput): { name?: string, namePattern?: string } {
    const filter: { name?: string, namePattern?: string } = {}
    if (input.name !== undefined) filter.name = input.name
    if (input.namePattern !== undefined) filter.namePattern = input.namePattern
    return filter
  }

  return {
    async list (principal, input) {
      requireAction(principal, kind.getAction)
      const page = parseListQuery(input, SORT_FIELDS, ctx.limits.maxTake)
      const ids = kind.ids(principal.scope)
      if (ids !== 'all' && ids.length === 0) return []
      return (await repo().list(ids, { ...filterOf(input), ...page })).map(toNamedEntityView)
    },

    async count (principal, input) {
      requireAction(principal, kind.getAction)
      const ids = kind.ids(principal.scope)
      if (ids !== 'all' && ids.length === 0) return { count: 0 }
      return { count: await repo().count(ids, filterOf(input)) }
    },

    async get (principal, id) {
      requireAction(principal, kind.getAction)
      const row = await loadVisible(principal, id)
      const devices = await ctx.store.devices.list(kind.deviceScope(principal.scope, id), { take: ctx.limits.maxTake })
      return { ...toNamedEntityView(row), devices: devices.map(toEmbeddedDevice) }
    },

    async create (principal, body) {
      requireAction(principal, kind.manageAction)
      const input = requireBody(body)
      const name = checkName(input.name)
      const description = checkDescription(input.description) ?? null
      await refuseDuplicate(name)
      try {
        return { id: await repo().insert({ name, description }) }
      } catch (error) {
        rethrowConflict(error)
      }
    },

    async update (principal, id, body) {
      requireAction(principal, kind.manageAction)
      await loadVisible(principal, id)
      const input = body ?? {}
      const patch: { name?: string, description?: string | null } = {}
      if (input.name !== undefined && input.name !== null) patch.name = checkName(input.name)
      const description = checkDescription(input.description)
      // An empty string clears the description; null leaves it as it is (§5.6).
      if (typeof description === 'string') patch.description = description === '' ? null : description
      if (patch.name !== undefined) await refuseDuplicate(patch.name, id)
      try {
        if (!(await repo().update(id, patch))) throw notFound(kind.notFound(id))
      } catch (error) {
        rethrowConflict(error)
      }
    },

    async delete (principal, id, force) {
      requireAction(principal, kind.manageAction)
      await loadVisible(principal, id)
      if (!force) {
        const devices = await ctx.store.devices.list(kind.deviceScope(principal.scope, id), { take: ctx.limits.maxTake })
        if (devices.length > 0) throw badRequest(kind.hasDevices(devices.map((d) => d.id).join(', ')))
      }
      // Devices and user assignments go with it through ON DELETE CASCADE (§8); the devices'
      // histories are queued and purged in the background. Only the users that had it lose
      // anything (D11): their open waits end, everyone else's go on.
      await ctx.store.transaction(async (tx) => {
        const holders = await kind.holders(tx, id)
        if (!(await kind.repository(tx).delete(id))) throw notFound(kind.notFound(id))
        for (const userId of holders) await revokeUser(ctx.bus, userId, tx)
      })
      // Its devices' ids may be registered again: none of them owns the deleted devices' commands.
      ctx.unansweredCommands.forget()
      ctx.purger.kick()
    }
  }
}
