import type { DataScope, JsonObject, Page } from '../values.js'

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
  /**
   * devicehub extension: text that the name or the id contains, ignoring case (already checked;
   * LIKE wildcards in it are matched literally).
   */
  search?: string
  networkId?: number
  networkName?: string
  deviceTypeId?: number
  deviceTypeName?: string
  sortField?: 'id' | 'name' | 'networkId' | 'deviceTypeId'
  /** Presence: devices seen at or after `since` (`online: true`) or not (`online: false`). */
  presence?: { online: boolean, since: number }
}

/** A deleted device whose history is still to remove (issue #16). */
export interface PurgeEntry {
  id: number
  deviceId: string
  /** The deleted device's internal key; null for history older than migration 0003. */
  deviceKey: number | null
}

/**
 * The histories of deleted devices. Deleting a device (directly, or with its network or device
 * type) queues its history in the same transaction; reads by device id already ignore it, and
 * the purger removes it in batches.
 */
export interface PurgeRepository {
  /** Queued entries, oldest first. */
  pending(limit: number): Promise<PurgeEntry[]>
  /** Deletes up to `batch` rows of the entry's commands and notifications; returns how many. */
  purgeBatch(entry: PurgeEntry, batch: number): Promise<number>
  /** Removes the entry once its history is gone. */
  done(id: number): Promise<void>
}

export type DevicePatch = Partial<Omit<DeviceRecord, 'id'>>

export interface DeviceRepository {
  findById(id: string): Promise<DeviceRecord | undefined>
  insert(device: DeviceRecord): Promise<void>
  /** Applies the fields present in `patch`; false when the device does not exist. */
  update(id: string, patch: DevicePatch): Promise<boolean>
  /** Deletes the device and queues its history for the purger (one transaction). */
  delete(id: string): Promise<boolean>
  /** Devices visible in `scope` (network and type both in it), filtered, sorted and paged. */
  list(scope: DataScope, filter: DeviceFilter): Promise<DeviceRecord[]>
  count(scope: DataScope, filter: DeviceFilter): Promise<number>
}
