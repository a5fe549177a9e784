import type { JsonObject } from '../ports.js'

export interface DeviceRecord {
  id: string
  name: string
  data: JsonObject | null
  networkId: number
  deviceTypeId: number
  isBlocked: boolean
}

// The registry issue grows this interface (lists, counts, updates, deletes).
export interface DeviceRepository {
  findById(id: string): Promise<DeviceRecord | undefined>
  insert(device: DeviceRecord): Promise<void>
}
