/**
 * Devices (spec §5.1-§5.5): scoped lists and counts, reads and deletes through the shared
 * device check, and registration by client-chosen id with its `$device-add` /
 * `$device-update` system notification (R3) written in the same transaction.
 */
import { Action } from '../auth/actions.js'
import { requireAction, scopeAllowsDeviceType, scopeAllowsNetwork, scopeIsEmpty } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import type { ServiceContext } from '../context.js'
import { badRequest, forbidden, unauthorized } from '../errors.js'
import type { ListQueryInput } from '../networks/list-query.js'
import { parseListQuery } from '../networks/list-query.js'
import type { DataScope } from '../ports.js'
import { FULL_SCOPE } from '../ports.js'
import type { DevicePresence, Presence } from '../presence/presence-service.js'
import { formatTimestamp } from '../time.js'
import { jsonObjectOrNull, requireBody, validationMessage } from '../validation.js'
import { loadDeviceInScope } from './device-access.js'
import type { DeviceFilter, DevicePatch, DeviceRecord } from './device-ports.js'
import type { DeviceBody, DeviceFields, DeviceView } from './device-schemas.js'

export type { DeviceBody, DeviceFields, DeviceView } from './device-schemas.js'

export interface DeviceListInput extends ListQueryInput {
  name?: string
  namePattern?: string
  /** devicehub extension: case-insensitive substring of the name or the id (at most {@link SEARCH_MAX_LENGTH}). */
  search?: string
  networkId?: number
  networkName?: string
  deviceTypeId?: number
  deviceTypeName?: string
  /** Presence filter: only devices online (true) or offline (false). */
  online?: boolean
}

export interface DeviceService {
  list(principal: Principal | undefined, input: DeviceListInput): Promise<DeviceView[]>
  count(principal: Principal | undefined, input: DeviceListInput): Promise<{ count: number }>
  get(principal: Principal | undefined, id: string): Promise<DeviceView>
  /** Create or update by client-chosen id; returns whether the device was created. */
  register(principal: Principal | undefined, id: string, body: DeviceBody | undefined): Promise<{ created: boolean }>
  delete(principal: Principal | undefined, id: string): Promise<void>
}

const SORT_FIELDS = { name: 'name', network: 'networkId', devicetype: 'deviceTypeId', status: 'id' } as const
const DEVICE_ID = /^[a-zA-Z0-9-]+$/
const NAME_MESSAGE = 'Field cannot be empty. The length of name should not be more than 128 symbols.'

/** The longest `search` text: a device name is at most 128 characters. */
export const SEARCH_MAX_LENGTH = 128

export const DeviceMessages = {
  searchTooLong: `The search text must be at most ${SEARCH_MAX_LENGTH} characters.`,
  badId: 'Device Id can only contain letters, digits and dashes.',
  idTooLong: 'Field cannot be empty. The length of guid should not be more than 48 symbols.',
  noNetwork: 'No access to network!',
  noDeviceType: 'No access to device type!',
  noDevice: 'No access to device'
} as const

export function toDeviceFields (device: DeviceRecord): DeviceFields {
  return {
    id: device.id,
    name: device.name,
    data: device.data,
    networkId: device.networkId,
    deviceTypeId: device.deviceTypeId,
    isBlocked: device.isBlocked
  }
}

/**
 * @example
 * toDeviceView(device, { lastSeen: Date.now(), online: true })
 */
export function toDeviceView (device: DeviceRecord, presence: DevicePresence | undefined): DeviceView {
  const lastSeen = presence?.lastSeen ?? null
  return { ...toDeviceFields(device), lastSeen: lastSeen === null ? null : formatTimestamp(lastSeen), online: presence?.online ?? false }
}

function filterOf (input: DeviceListInput, presence: Presence): DeviceFilter {
  const filter: DeviceFilter = {}
  if (input.online !== undefined) filter.presence = { online: input.online, since: presence.freshSince() }
  if (input.name !== undefined) filter.name = input.name
  if (input.namePattern !== undefined) filter.namePattern = input.namePattern
  const search = checkedSearch(input.search)
  if (search !== undefined) filter.search = search
  if (input.networkId !== undefined) filter.networkId = input.networkId
  if (input.networkName !== undefined) filter.networkName = input.networkName
  if (input.deviceTypeId !== undefined) filter.deviceTypeId = input.deviceTypeId
  if (input.deviceTypeName !== undefined) filter.deviceTypeName = input.deviceTypeName
  return filter
}

/** An empty (or blank) search means no search; a longer one than a device name can be is 400. */
function checkedSearch (value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined
  if (value.length > SEARCH_MAX_LENGTH) throw badRequest(DeviceMessages.searchTooLong)
  return value
}

function optionalId (value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw badRequest()
  return value
}

/** Checks the device id of the path (§5.3). */
export function checkDeviceId (id: string): void {
  if (!DEVICE_ID.test(id)) throw badRequest(DeviceMessages.badId)
  if (id.length > 48) throw badRequest(DeviceMessages.idTooLong)
}

/**
 * @example
 * const devices = createDeviceService(ctx)
 * await devices.register(principal, 'sensor-1', { name: 'Sensor 1' })
 */
export function createDeviceService (ctx: ServiceContext): DeviceService {
  const { store, presence } = ctx

  async function views (devices: DeviceRecord[]): Promise<DeviceView[]> {
    const states = await presence.describe(devices.map((d) => d.id))
    return devices.map((d) => toDeviceView(d, states.get(d.id)))
  }

  /**
   * What the calling user may use when registering (D7): its own assignments, not the token's
   * `n` / `dt` lists; an administrator (and the system principal) may use everything.
   */
  async function registrationRights (principal: Principal): Promise<DataScope> {
    if (principal.kind !== 'user' || principal.isAdmin) return FULL_SCOPE
    const { user } = principal
    return {
      networkIds: await store.users.networkIds(user.id),
      deviceTypeIds: user.allDeviceTypesAvailable ? 'all' : await store.users.deviceTypeIds(user.id)
    }
  }

  /**
   * Network resolution (§5.3 step 1): the given network must exist (else 400) and be one the
   * user may use (else 403); without one, the lowest-id network assigned to the user.
   */
  async function resolveNetwork (principal: Principal, rights: DataScope, requested: number | undefined): Promise<number> {
    if (requested !== undefined) {
      if ((await store.networks.findById(requested)) === undefined) throw badRequest()
      if (!scopeAllowsNetwork(rights, requested)) throw forbidden(DeviceMessages.noNetwork)
      return requested
    }
    const assigned = principal.kind === 'user'
      ? await store.users.networkIds(principal.user.id)
      : (await store.networks.list('all', { take: 1 })).map((row) => row.id)
    if (assigned.length === 0) throw forbidden(DeviceMessages.noNetwork)
    return Math.min(...assigned)
  }

  /** Device type resolution (§5.3 step 2): the given one, else the lowest the user may use. */
  async function resolveDeviceType (rights: DataScope, requested: number | undefined): Promise<number> {
    if (requested !== undefined) {
      if ((await store.deviceTypes.findById(requested)) === undefined) throw badRequest()
      if (!scopeAllowsDeviceType(rights, requested)) throw forbidden(DeviceMessages.noDeviceType)
      return requested
    }
    const ids = rights.deviceTypeIds
    const [first] = ids !== 'all' && ids.length === 0 ? [] : await store.deviceTypes.list(ids, { take: 1 })
    if (first === undefined) throw forbidden(DeviceMessages.noDeviceType)
    return first.id
  }

  return {
    async list (principal, input) {
      requireAction(principal, Action.GetDevice)
      const page = parseListQuery(input, SORT_FIELDS, ctx.limits.maxTake)
      const filter = filterOf(input, presence)
      if (scopeIsEmpty(principal.scope)) return []
      return views(await store.devices.list(principal.scope, { ...filter, ...page }))
    },

    async count (principal, input) {
      requireAction(principal, Action.GetDevice)
      const filter = filterOf(input, presence)
      if (scopeIsEmpty(principal.scope)) return { count: 0 }
      return { count: await store.devices.count(principal.scope, filter) }
    },

    async get (principal, id) {
      const [view] = await views([await loadDeviceInScope(store, principal, Action.GetDevice, id)])
      return view!
    },

    async register (principal, id, body) {
      requireAction(principal, Action.RegisterDevice)
      // Registration acts for a user; plugin tokens have none (§5.3).
      if (principal.kind === 'plugin') throw unauthorized()
      checkDeviceId(id)
      const input = requireBody(body)
      const name = input.name
      if (name !== undefined && name !== null && (typeof name !== 'string' || name.length < 1 || name.length > 128)) {
        throw badRequest(validationMessage([{ property: 'name', value: name, message: NAME_MESSAGE }]))
      }
      const data = jsonObjectOrNull(input.data) ?? null
      const requestedNetwork = optionalId(input.networkId)
      const requestedType = optionalId(input.deviceTypeId)
      if (input.isBlocked !== undefined && input.isBlocked !== null && typeof input.isBlocked !== 'boolean') throw badRequest()
      const isBlocked = input.isBlocked as boolean | null | undefined
      const rights = await registrationRights(principal)
      const networkId = await resolveNetwork(principal, rights, requestedNetwork)
      const deviceTypeId = await resolveDeviceType(rights, requestedType)

      return store.transaction(async (tx) => {
        const existing = await tx.devices.findById(id)
        let device: DeviceRecord
        if (existing === undefined) {
          if (typeof name !== 'string') {
            throw badRequest(validationMessage([{ property: 'name', value: null, message: 'name field cannot be null.' }]))
          }
          device = { id, name, data, networkId, deviceTypeId, isBlocked: isBlocked ?? false }
          await tx.devices.insert(device)
        } else {
          // D7: the user's own networks decide, not the token's list (§5.3 step 3).
          if (!scopeAllowsNetwork(rights, existing.networkId)) throw forbidden(DeviceMessages.noDevice)
          // data is always replaced; the other fields change only when given (§5.3).
          const patch: DevicePatch = { data }
          if (typeof name === 'string') patch.name = name
          if (requestedNetwork !== undefined) patch.networkId = networkId
          if (requestedType !== undefined) patch.deviceTypeId = deviceTypeId
          if (typeof isBlocked === 'boolean') patch.isBlocked = isBlocked
          await tx.devices.update(id, patch)
          device = { ...existing, ...patch }
        }
        await ctx.log.append({
          kind: 'notification',
          input: {
            notification: existing === undefined ? '$device-add' : '$device-update',
            deviceId: device.id,
            networkId: device.networkId,
            deviceTypeId: device.deviceTypeId,
            parameters: { ...toDeviceFields(device) }
          }
        }, tx)
        return { created: existing === undefined }
      })
    },

    async delete (principal, id) {
      await loadDeviceInScope(store, principal, Action.RegisterDevice, id)
      // Its history is queued in the delete's transaction and removed in the background.
      await store.devices.delete(id)
      // A device created again under this id does not own the deleted one's commands.
      ctx.unansweredCommands.forget()
      ctx.purger.kick()
    }
  }
}
