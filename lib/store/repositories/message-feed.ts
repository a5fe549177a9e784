/**
 * The message feed of core/realtime/message-feed.ts: reads after a log cursor by the server's
 * stamps, never past `upTo` (the mark the reader was handed). Stamps and ids are drawn before
 * their rows commit: on PostgreSQL a row above the mark may sit past a stamp still being written,
 * and a reader that took it would move its cursor past that stamp for good (issue #24).
 */
import type { Kysely, RawBuilder, SqlBool } from 'kysely'
import { sql } from 'kysely'
import type { FeedQuery, MessageFeedRepository } from '../../core/realtime/message-feed.js'
import { encodeBool } from '../codec.js'
import type { Database } from '../database.js'
import { messaging, selectorWhere } from './message-clock.js'
import type { QueryTemplates } from '../query-templates.js'
import { createQueryTemplates } from '../query-templates.js'
import { toCommandRecord } from './commands.js'
import { toNotificationRecord } from './notifications.js'

/**
 * R7 (`commandExpired`): a command is live at `now` unless its lifetime (from the server's stamp;
 * 0, like null, is none) has passed without an update.
 */
function unexpiredAt (now: number): RawBuilder<SqlBool> {
  return sql<SqlBool>`(lifetime is null or lifetime = 0 or is_updated = ${encodeBool(true)} or clock_ts + lifetime * 1000 >= ${now})`
}

export function createMessageFeedRepository (
  db: Kysely<Database>, templates: QueryTemplates = createQueryTemplates()
): MessageFeedRepository {
  return {
    async position () {
      const [row] = await templates.run(db, 'feed-position', () => messaging(db).selectFrom('message_clock')
        .select([
          sql<number | null>`(select max(id) from notifications)`.as('notification'),
          sql<number | null>`(select max(id) from commands)`.as('command'),
          'last_ts'
        ])
        .where('id', '=', 1), [])
      return { notification: Number(row?.notification ?? 0), command: Number(row?.command ?? 0), clock: Number(row?.last_ts ?? 0) }
    },

    async notifications (q: FeedQuery) {
      if (q.limit <= 0 || q.upTo.clock <= q.after.clock || q.upTo.notification <= q.after.notification) return []
      const rows = await messaging(db).selectFrom('notifications').selectAll()
        .where(selectorWhere(q.selector, 'notification'))
        .where('clock_ts', '>', q.after.clock)
        .where('clock_ts', '<=', q.upTo.clock)
        .$if(q.after.notification > 0, (query) => query.where('id', '>', q.after.notification))
        .orderBy('clock_ts', 'asc').orderBy('id', 'asc').limit(q.limit).execute()
      return rows.map(toNotificationRecord)
    },

    async commands (q: FeedQuery) {
      if (q.limit <= 0 || q.upTo.clock <= q.after.clock || q.upTo.command <= q.after.command) return []
      const rows = await messaging(db).selectFrom('commands').selectAll()
        .where(selectorWhere(q.selector, 'command'))
        .where('clock_ts', '>', q.after.clock)
        .where('clock_ts', '<=', q.upTo.clock)
        .$if(q.after.command > 0, (query) => query.where('id', '>', q.after.command))
        .$if(q.liveAt !== undefined, (query) => query.where(unexpiredAt(q.liveAt!)))
        .orderBy('clock_ts', 'asc').orderBy('id', 'asc').limit(q.limit).execute()
      return rows.map(toCommandRecord)
    },

    async updates (q: FeedQuery) {
      if (q.limit <= 0 || q.upTo.clock <= q.after.clock) return []
      const rows = await messaging(db).selectFrom('commands').selectAll()
        .where(selectorWhere(q.selector, 'command'))
        .where('is_updated', '=', encodeBool(true))
        .where('last_updated', '>', q.after.clock)
        .where('last_updated', '<=', q.upTo.clock)
        .orderBy('last_updated', 'asc').orderBy('id', 'asc').limit(q.limit).execute()
      return rows.map(toCommandRecord)
    }
  }
}
