import type { Kysely } from 'kysely'
import type { NotificationRepository } from '../../core/notifications/notification-ports.js'
import type { Database } from '../database.js'

export function createNotificationRepository (_db: Kysely<Database>): NotificationRepository {
  return {}
}
