import type { DeviceHub } from '../../core/devicehub.js'
import type { App } from '../types.js'

// Grown by its issue; registered from routes/index.ts.
export function deviceRoutes (_app: App, _hub: DeviceHub): void {}
