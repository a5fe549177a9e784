import type { DataScope, JsonObject, Page } from '../ports.js'

export interface DeviceRecord {
  id: string
  name: string
  data: JsonObject | null
  networkId: number
  deviceTypeId: number
  isBlocked: boolean
}

/** Device list filters (spec §5.1) after validation; `sortField` is a storage name. */
export interface DeviceFilter extends Page {
  name?: string
  namePattern?: string
  networkId?: number
  networkName?: string
  deviceTypeId?: number
  deviceTypeName?: string
  sortField?: 'id' | 'name' | 'networkId' | 'deviceTypeId'
}

export type DevicePatch = Partial<Omit<DeviceRecord, 'id'>>

export interface DeviceRepository {
  findById(id: string): Promise<DeviceRecord | undefined>
  insert(device: DeviceRecord): Promise<void>
  /** Applies the fields present in `patch`; false when the device does not exist. */
  update(id: string, patch: DevicePatch): Promise<boolean>
  delete(id: string): Promise<boolean>
  /** Devices visible in `scope` (network and type both in it), filtered, sorted and paged. */
  list(scope: DataScope, filter: DeviceFilter): Promise<DeviceRecord[]>
  count(scope: DataScope, filter: DeviceFilter): Promise<number>
}
