import type { Page } from '../ports.js'

export interface DeviceTypeRecord {
  id: number
  name: string
  description: string | null
}

export interface DeviceTypeFilter extends Page {
  name?: string
  namePattern?: string
  sortField?: 'id' | 'name'
}

export interface DeviceTypeRepository {
  findById(id: number): Promise<DeviceTypeRecord | undefined>
  findByName(name: string): Promise<DeviceTypeRecord | undefined>
  insert(network: Omit<DeviceTypeRecord, 'id'>): Promise<number>
  update(id: number, patch: Partial<Omit<DeviceTypeRecord, 'id'>>): Promise<boolean>
  delete(id: number): Promise<boolean>
  /** Device types whose id is in `ids` (`'all'` = no restriction), filtered and paged. */
  list(ids: 'all' | readonly number[], filter: DeviceTypeFilter): Promise<DeviceTypeRecord[]>
  count(ids: 'all' | readonly number[], filter: DeviceTypeFilter): Promise<number>
}
