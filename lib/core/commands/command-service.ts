import type { ServiceContext } from '../context.js'

// Grown by its issue; the foundation only wires it into createDeviceHub.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CommandService {}

export function createCommandService (_ctx: ServiceContext): CommandService {
  return {}
}
