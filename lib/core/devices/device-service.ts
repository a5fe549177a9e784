/**
 * Devices (spec §5.1-§5.5): scoped lists and counts, reads and deletes through the shared
 * device check, and registration by client-chosen id with its `$device-add` /
 * `$device-update` system notification (R3) written in the same transaction.
 */
import { Action } from '../auth/actions.js'
import { requireAction, scopeAllowsDevice, scopeAllowsDeviceType, scopeAllowsNetwork, scopeIsEmpty } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import type { ServiceContext } from '../context.js'
import { badRequest, forbidden, unauthorized } from '../errors.js'
import type { ListQueryInput } from '../networks/list-query.js'
import { parseListQuery } from '../networks/list-query.js'
import { recordNotification } from '../notifications/record-notification.js'
import type { JsonObject } from '../ports.js'
import { jsonObjectOrNull, requireBody, validationMessage } from '../validation.js'
import { loadDeviceInScope } from './device-access.js'
import type { DeviceFilter, DevicePatch, DeviceRecord } from './device-ports.js'

export interface DeviceView {
  id: string
  name: string
  data: JsonObject | null
  networkId: number
  deviceTypeId: number
  isBlocked: boolean
}

export interface DeviceListInput extends ListQueryInput {
  name?: string
  namePattern?: string
  networkId?: number
  networkName?: string
  deviceTypeId?: number
  deviceTypeName?: string
}

export interface DeviceBody {
  name?: unknown
  data?: unknown
  networkId?: unknown
  deviceTypeId?: unknown
  isBlocked?: unknown
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

export const DeviceMessages = {
  badId: 'Device Id can only contain letters, digits and dashes.',
  idTooLong: 'Field cannot be empty. The length of guid should not be more than 48 symbols.',
  noNetwork: 'No access to network!',
  noDeviceType: 'No access to device type!',
  noDevice: 'No access to device'
} as const

export function toDeviceView (device: DeviceRecord): DeviceView {
  return {
    id: device.id,
    name: device.name,
    data: device.data,
    networkId: device.networkId,
    deviceTypeId: device.deviceTypeId,
    isBlocked: device.isBlocked
  }
}

function filterOf (input: DeviceListInput): DeviceFilter {
  const filter: DeviceFilter = {}
  if (input.name !== undefined) filter.name = input.name
  if (input.namePattern !== undefined) filter.namePattern = input.namePattern
  if (input.networkId !== undefined) filter.networkId = input.networkId
  if (input.networkName !== undefined) filter.networkName = input.networkName
  if (input.deviceTypeId !== undefined) filter.deviceTypeId = input.deviceTypeId
  if (input.deviceTypeName !== undefined) filter.deviceTypeName = input.deviceTypeName
  return filter
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
  const { store } = ctx

  /** Network resolution (§5.3 step 1), bounded by the caller's scope as well as the user's assignments. */
  async function resolveNetwork (principal: Principal, requested: number | undefined): Promise<number> {
    if (requested !== undefined) {
      if (!scopeAllowsNetwork(principal.scope, requested)) throw forbidden(DeviceMessages.noNetwork)
      if ((await store.networks.findById(requested)) === undefined) throw badRequest()
      return requested
    }
    if (principal.kind === 'user') {
      const assigned = await store.users.networkIds(principal.user.id)
      const usable = assigned.filter((id) => scopeAllowsNetwork(principal.scope, id))
      if (usable.length === 0) throw forbidden(DeviceMessages.noNetwork)
      return Math.min(...usable)
    }
    const [first] = await store.networks.list('all', { take: 1 })
    if (first === undefined) throw forbidden(DeviceMessages.noNetwork)
    return first.id
  }

  /** Device type resolution (§5.3 step 2): the given one, else the lowest the caller may use. */
  async function resolveDeviceType (principal: Principal, requested: number | undefined): Promise<number> {
    if (requested !== undefined) {
      if (!scopeAllowsDeviceType(principal.scope, requested)) throw forbidden(DeviceMessages.noDeviceType)
      if ((await store.deviceTypes.findById(requested)) === undefined) throw badRequest()
      return requested
    }
    const ids = principal.scope.deviceTypeIds
    const [first] = ids !== 'all' && ids.length === 0 ? [] : await store.deviceTypes.list(ids, { take: 1 })
    if (first === undefined) throw forbidden(DeviceMessages.noDeviceType)
    return first.id
  }

  return {
    async list (principal, input) {
      requireAction(principal, Action.GetDevice)
      const page = parseListQuery(input, SORT_FIELDS, ctx.limits.maxTake)
      if (scopeIsEmpty(principal.scope)) return []
      return (await store.devices.list(principal.scope, { ...filterOf(input), ...page })).map(toDeviceView)
    },

    async count (principal, input) {
      requireAction(principal, Action.GetDevice)
      if (scopeIsEmpty(principal.scope)) return { count: 0 }
      return { count: await store.devices.count(principal.scope, filterOf(input)) }
    },

    async get (principal, id) {
      return toDeviceView(await loadDeviceInScope(store, principal, Action.GetDevice, id))
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
      const networkId = await resolveNetwork(principal, requestedNetwork)
      const deviceTypeId = await resolveDeviceType(principal, requestedType)

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
          if (!scopeAllowsDevice(principal.scope, existing)) throw forbidden(DeviceMessages.noDevice)
          // data is always replaced; the other fields change only when given (§5.3).
          const patch: DevicePatch = { data }
          if (typeof name === 'string') patch.name = name
          if (requestedNetwork !== undefined) patch.networkId = networkId
          if (requestedType !== undefined) patch.deviceTypeId = deviceTypeId
          if (typeof isBlocked === 'boolean') patch.isBlocked = isBlocked
          await tx.devices.update(id, patch)
          device = { ...existing, ...patch }
        }
        await recordNotification(ctx, {
          notification: existing === undefined ? '$device-add' : '$device-update',
          deviceId: device.id,
          networkId: device.networkId,
          deviceTypeId: device.deviceTypeId,
          parameters: { ...toDeviceView(device) }
        }, tx)
        return { created: existing === undefined }
      })
    },

    async delete (principal, id) {
      await loadDeviceInScope(store, principal, Action.RegisterDevice, id)
      await store.devices.delete(id)
    }
  }
}
