/** What every domain service is built from: the ports plus settings. */
import type { AuthService } from './auth/auth-service.js'
import type { HistoryPurger } from './devices/history-purge.js'
import type { Logger, Store } from './ports.js'
import type { Presence } from './presence/presence.js'
import type { WaiterRegistry } from './realtime/cancellation.js'
import type { Bus } from './realtime/bus.js'
import type { MessageLog } from './realtime/message-log.js'
import type { UnansweredCommands } from './realtime/unanswered-commands.js'
import type { Router } from './realtime/router.js'
import type { Clock } from './time.js'

export interface Limits {
  /** R10: the largest `take` a list accepts (default 10,000). */
  maxTake: number
}

export interface ServiceContext {
  store: Store
  /** The bus in log order: control events are published here; listeners register in `router`. */
  bus: Bus
  /** The one write path of messages, and the mark readers take. */
  log: MessageLog
  /** The hub's routing index: streams and long polls register here. */
  router: Router
  /** Commands released and not yet answered: the wait for a result starts from here, not from a read. */
  unansweredCommands: UnansweredCommands
  clock: Clock
  logger: Logger
  limits: Limits
  auth: AuthService
  /** Pending long polls; released at shutdown so they answer `[]` at once. */
  waiters: WaiterRegistry
  /** Device presence: services report device-authored activity to it. */
  presence: Presence
  /** Removes the histories of deleted devices in the background. */
  purger: HistoryPurger
}
