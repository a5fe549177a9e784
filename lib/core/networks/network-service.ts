/** Networks (spec §5.6): the shared named-entity rules with the network texts and scope. */
import type { ServiceContext } from '../context.js'
import type { NamedEntityService } from './named-entity-service.js'
import { NetworkKind, createNamedEntityService } from './named-entity-service.js'

export type NetworkService = NamedEntityService

/**
 * @example
 * const networks = createNetworkService(ctx)
 * await networks.list(principal, { namePattern: 'Lab%' })
 */
export function createNetworkService (ctx: ServiceContext): NetworkService {
  return createNamedEntityService(ctx, NetworkKind)
}
