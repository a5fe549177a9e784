import type { ServiceContext } from '../context.js'

// Grown by its issue; the foundation only wires it into createDeviceHub.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PluginService {}

export function createPluginService (_ctx: ServiceContext): PluginService {
  return {}
}
