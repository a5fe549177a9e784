/**
 * The message feed of core/realtime/message-feed.ts: reads after a log cursor by the server's
 * stamps, never past `upTo` (the mark the reader was handed). Stamps and ids are drawn before
 * their rows commit: on PostgreSQL a row above the mark may sit past a stamp still being written,
 * and a reader that took it would move its cursor past that stamp for good (issue #24).
 */
import type { Compilable, Kysely, RawBuilder, SqlBool } from 'kysely'
import { sql } from 'kysely'
import type { FeedQuery, MessageFeedRepository } from '../../core/realtime/message-feed.js'
import { encodeBool } from '../codec.js'
import type { Database } from '../database.js'
import type { MessageSelector } from '../../core/realtime/message-filter.js'
import { messaging, selectorShape, selectorWhere } from './message-clock.js'
import type { QueryTemplates, SlotOf } from '../query-templates.js'
import { createQueryTemplates } from '../query-templates.js'
import { toCommandRecord } from './commands.js'
import { toNotificationRecord } from './notifications.js'

/**
 * R7 (`commandExpired`): a command is live at `now` unless its lifetime (from the server's stamp;
 * 0, like null, is none) has passed without an update.
 */
function unexpiredAt (now: unknown): RawBuilder<SqlBool> {
  return sql<SqlBool>`(lifetime is null or lifetime = 0 or is_updated = ${encodeBool(true)} or clock_ts + lifetime * 1000 >= ${now})`
}

export function createMessageFeedRepository (
  db: Kysely<Database>, templates: QueryTemplates = createQueryTemplates()
): MessageFeedRepository {
  /**
   * A feed read of `name` through a template per selector shape (message-clock.ts,
   * `selectorShape`): `build` gets the selector's condition and the slots of `values` from
   * `first` on. A selector with long lists is built each time, with the values in place.
   */
  function read<R> (
    name: string, selector: MessageSelector, nameColumn: 'command' | 'notification',
    build: (where: RawBuilder<SqlBool>, slot: SlotOf, first: number) => Compilable<R>, values: unknown[]
  ): Promise<R[]> {
    const shape = selectorShape(selector, nameColumn)
    if (shape === undefined) {
      // Each "slot" is the value itself: an ordinary query.
      const query = build(selectorWhere(selector, nameColumn), (index) => values[index] as never, 0).compile()
      return db.executeQuery(query).then((result) => result.rows)
    }
    const first = shape.values.length
    return templates.run(db, `${name}:${shape.key}`, (slot) => build(shape.where(slot), slot, first), [...shape.values, ...values])
  }

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
      const afterId = q.after.notification > 0
      const rows = await read(`feed-notifications:${afterId}`, q.selector, 'notification', (where, slot, first) => {
        let query = messaging(db).selectFrom('notifications').selectAll().where(where)
          .where('clock_ts', '>', slot(first)).where('clock_ts', '<=', slot(first + 1))
        if (afterId) query = query.where('id', '>', slot(first + 2))
        return query.orderBy('clock_ts', 'asc').orderBy('id', 'asc').limit(slot(first + 3))
      }, [q.after.clock, q.upTo.clock, q.after.notification, q.limit])
      return rows.map(toNotificationRecord)
    },

    async commands (q: FeedQuery) {
      if (q.limit <= 0 || q.upTo.clock <= q.after.clock || q.upTo.command <= q.after.command) return []
      const afterId = q.after.command > 0
      const live = q.liveAt !== undefined
      const rows = await read(`feed-commands:${afterId}:${live}`, q.selector, 'command', (where, slot, first) => {
        let query = messaging(db).selectFrom('commands').selectAll().where(where)
          .where('clock_ts', '>', slot(first)).where('clock_ts', '<=', slot(first + 1))
        if (afterId) query = query.where('id', '>', slot(first + 2))
        if (live) query = query.where(unexpiredAt(slot(first + 4)))
        return query.orderBy('clock_ts', 'asc').orderBy('id', 'asc').limit(slot(first + 3))
      }, [q.after.clock, q.upTo.clock, q.after.command, q.limit, q.liveAt])
      return rows.map(toCommandRecord)
    },

    async updates (q: FeedQuery) {
      if (q.limit <= 0 || q.upTo.clock <= q.after.clock) return []
      const rows = await read('feed-updates', q.selector, 'command', (where, slot, first) => messaging(db)
        .selectFrom('commands').selectAll().where(where)
        .where('is_updated', '=', encodeBool(true))
        .where('last_updated', '>', slot(first))
        .where('last_updated', '<=', slot(first + 1))
        .orderBy('last_updated', 'asc').orderBy('id', 'asc').limit(slot(first + 2)), [q.after.clock, q.upTo.clock, q.limit])
      return rows.map(toCommandRecord)
    }
  }
}
