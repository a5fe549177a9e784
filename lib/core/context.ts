/** What every domain service is built from: the ports plus settings. */
import type { AuthService } from './auth/auth-service.js'
import type { Logger, Store } from './ports.js'
import type { WaiterRegistry } from './realtime/cancellation.js'
import type { Hub } from './realtime/hub.js'
import type { Clock } from './time.js'

export interface Limits {
  /** R10: the largest `take` a list accepts (default 10,000). */
  maxTake: number
}

export interface ServiceContext {
  store: Store
  hub: Hub
  clock: Clock
  logger: Logger
  limits: Limits
  auth: AuthService
  /** Pending long polls; released at shutdown so they answer `[]` at once. */
  waiters: WaiterRegistry
}
