/**
 * The message feed of core/realtime/message-feed.ts: reads by id and by update stamp, never past
 * `upTo` (the position the reader was handed). Ids are drawn before their rows commit: on
 * PostgreSQL a row above the doorbell's mark may sit past an id still being written, and a
 * reader that took it would move its position past that id for good (issue #24).
 */
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { FeedQuery, MessageFeedRepository } from '../../core/realtime/message-feed.js'
import { encodeBool } from '../codec.js'
import type { Database } from '../database.js'
import { messaging, selectorWhere } from './message-clock.js'
import { toCommandRecord } from './commands.js'
import { toNotificationRecord } from './notifications.js'

export function createMessageFeedRepository (db: Kysely<Database>): MessageFeedRepository {
  return {
    async position () {
      const row = await messaging(db).selectFrom('message_clock')
        .select([
          sql<number | null>`(select max(id) from notifications)`.as('notification'),
          sql<number | null>`(select max(id) from commands)`.as('command'),
          'last_ts'
        ])
        .where('id', '=', 1)
        .executeTakeFirst()
      return { notification: Number(row?.notification ?? 0), command: Number(row?.command ?? 0), update: Number(row?.last_ts ?? 0) }
    },

    async notifications (q: FeedQuery) {
      if (q.limit <= 0 || q.upTo <= q.after) return []
      const rows = await messaging(db).selectFrom('notifications').selectAll()
        .where(selectorWhere(q.selector, 'notification'))
        .where('id', '>', q.after)
        .where('id', '<=', q.upTo)
        .orderBy('id', 'asc').limit(q.limit).execute()
      return rows.map(toNotificationRecord)
    },

    async commands (q: FeedQuery) {
      if (q.limit <= 0 || q.upTo <= q.after) return []
      const rows = await messaging(db).selectFrom('commands').selectAll()
        .where(selectorWhere(q.selector, 'command'))
        .where('id', '>', q.after)
        .where('id', '<=', q.upTo)
        .orderBy('id', 'asc').limit(q.limit).execute()
      return rows.map(toCommandRecord)
    },

    async updates (q: FeedQuery) {
      if (q.limit <= 0 || q.upTo <= q.after) return []
      const rows = await messaging(db).selectFrom('commands').selectAll()
        .where(selectorWhere(q.selector, 'command'))
        .where('is_updated', '=', encodeBool(true))
        .where('last_updated', '>', q.after)
        .where('last_updated', '<=', q.upTo)
        .orderBy('last_updated', 'asc').orderBy('id', 'asc').limit(q.limit).execute()
      return rows.map(toCommandRecord)
    }
  }
}
