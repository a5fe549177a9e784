import type { Page } from '../values.js'

export interface NetworkRecord {
  id: number
  name: string
  description: string | null
}

export interface NetworkFilter extends Page {
  name?: string
  namePattern?: string
  sortField?: 'id' | 'name'
}

export interface NetworkRepository {
  findById(id: number): Promise<NetworkRecord | undefined>
  findByName(name: string): Promise<NetworkRecord | undefined>
  insert(network: Omit<NetworkRecord, 'id'>): Promise<number>
  update(id: number, patch: Partial<Omit<NetworkRecord, 'id'>>): Promise<boolean>
  delete(id: number): Promise<boolean>
  /** Networks whose id is in `ids` (`'all'` = no restriction), filtered and paged. */
  list(ids: 'all' | readonly number[], filter: NetworkFilter): Promise<NetworkRecord[]>
  count(ids: 'all' | readonly number[], filter: NetworkFilter): Promise<number>
}
