/** Device types have exactly the shape, filters and rules of networks (spec §5.7). */
import type { NetworkFilter, NetworkRecord, NetworkRepository } from '../networks/network-ports.js'

export type DeviceTypeRecord = NetworkRecord
export type DeviceTypeFilter = NetworkFilter
export type DeviceTypeRepository = NetworkRepository
