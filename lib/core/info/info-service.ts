/** `/info`, `/info/cache`, `/info/config/cluster` (spec §3): public, no action needed. */
import type { Clock } from '../time.js'
import { formatTimestamp } from '../time.js'
import { API_VERSION, SERVER_VERSION } from '../version.js'
import type { ApiInfo, CacheInfo, ClusterInfo } from './info-schemas.js'

export type { ApiInfo, CacheInfo, ClusterInfo } from './info-schemas.js'

export interface InfoService {
  info(): ApiInfo
  cache(): CacheInfo
  cluster(): ClusterInfo
}

export interface InfoOptions {
  clock: Clock
  /** Strings reported by `/info/config/cluster` (no Kafka here; both default to ''). */
  cluster?: Partial<ClusterInfo>
  /** Describes the storage for `/info/cache`'s `cacheStats`. */
  describeStore?: () => string
}

export function createInfoService ({ clock, cluster = {}, describeStore = () => 'no cache' }: InfoOptions): InfoService {
  return {
    info: () => ({ apiVersion: API_VERSION, serverVersion: SERVER_VERSION, serverTimestamp: formatTimestamp(clock.now()) }),
    cache: () => ({ serverTimestamp: formatTimestamp(clock.now()), cacheStats: describeStore() }),
    cluster: () => ({
      'bootstrap.servers': cluster['bootstrap.servers'] ?? '',
      'zookeeper.connect': cluster['zookeeper.connect'] ?? ''
    })
  }
}
