/** Every route module, in registration order. Each is `(app, hub) => void`. */
import type { DeviceHub } from '../../core/devicehub.js'
import type { App } from '../types.js'
import { commandRoutes } from './commands.js'
import { configurationRoutes } from './configuration.js'
import { deviceTypeRoutes } from './device-types.js'
import { deviceRoutes } from './devices.js'
import { networkRoutes } from './networks.js'
import { notificationRoutes } from './notifications.js'
import { pluginTokenRoutes } from './plugin-tokens.js'
import { pluginRoutes } from './plugins.js'
import { streamRoutes } from './streams.js'
import { tokenRoutes } from './tokens.js'
import { userRoutes } from './users.js'

export const routeModules: ReadonlyArray<(app: App, hub: DeviceHub) => void> = [
  tokenRoutes,
  configurationRoutes,
  networkRoutes,
  deviceTypeRoutes,
  deviceRoutes,
  userRoutes,
  commandRoutes,
  notificationRoutes,
  streamRoutes,
  pluginRoutes,
  pluginTokenRoutes
]
