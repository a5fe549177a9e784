/**
 * The wire shapes of the server information (spec §3). Each transport adds the URL of the
 * other to {@link ApiInfo}: REST `/info` its `webSocketServerUrl`, WebSocket `server/info`
 * its `restServerUrl`.
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'
import { Timestamp } from '../schemas.js'

/** API version and server time. */
export const ApiInfo = Type.Object({
  apiVersion: Type.String(),
  serverVersion: Type.String(),
  serverTimestamp: Timestamp
})
export type ApiInfo = Static<typeof ApiInfo>

/** What `/info/cache` answers (informational). */
export const CacheInfo = Type.Object({ serverTimestamp: Timestamp, cacheStats: Type.String() })
export type CacheInfo = Static<typeof CacheInfo>

/** Cluster connection strings (empty: devicehub needs no Kafka). */
export const ClusterInfo = Type.Object({ 'bootstrap.servers': Type.String(), 'zookeeper.connect': Type.String() })
export type ClusterInfo = Static<typeof ClusterInfo>
