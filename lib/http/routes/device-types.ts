/** `/devicetype` (spec §5.7): the network routes with the device-type service and actions. */
import { Action } from '../../core/auth/actions.js'
import type { DeviceHub } from '../../core/devicehub.js'
import type { App } from '../types.js'
import { namedEntityRoutes } from './networks.js'

export function deviceTypeRoutes (app: App, hub: DeviceHub): void {
  namedEntityRoutes(
    app, hub.deviceTypes, { path: '/devicetype', tag: 'devicetype', getAction: Action.GetDeviceType, manageAction: Action.ManageDeviceType }
  )
}
