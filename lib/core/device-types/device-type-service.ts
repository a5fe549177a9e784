/** Device types (spec §5.7): the shared named-entity rules with the device-type texts and scope. */
import type { ServiceContext } from '../context.js'
import type { NamedEntityService } from '../networks/named-entity-service.js'
import { DeviceTypeKind, createNamedEntityService } from '../networks/named-entity-service.js'

export type DeviceTypeService = NamedEntityService

/**
 * @example
 * const deviceTypes = createDeviceTypeService(ctx)
 * await deviceTypes.create(principal, { name: 'Sensors' })
 */
export function createDeviceTypeService (ctx: ServiceContext): DeviceTypeService {
  return createNamedEntityService(ctx, DeviceTypeKind)
}
