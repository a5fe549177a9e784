/**
 * The message feed: every command insert, command update and notification insert in commit
 * order, read after a {@link LogCursor} (by the server's stamps, never a client's timestamp), so
 * that a reader that resumes from a cursor loses and repeats nothing.
 *
 * Stamps and ids grow in draw order, but they are drawn before their rows commit, and on
 * PostgreSQL commits land in any order: `stamp > after` alone is not a commit-ordered cursor. A
 * read is therefore bounded by `upTo`, a cursor below which everything is committed (the log's
 * mark); a reader never moves past it, so a stamp drawn but not yet committed is never skipped
 * (issue #24). The message log reads through this port (`MessageLog.readAfter`).
 */
import type { CommandRecord, NotificationRecord } from './message-records.js'
import type { LogCursor } from './log-cursor.js'
import type { MessageSelector } from './message-filter.js'

export interface FeedQuery {
  /** Scope, device and names; without names the system notifications are left out (R3). */
  selector: MessageSelector
  /**
   * Items after this cursor: inserts with an id above its component of their kind and a stamp
   * above its clock, updates with `lastUpdated` above its clock.
   */
  after: LogCursor
  /**
   * And at or below this cursor, taken before the read, below which everything is committed
   * (the log's mark). Required: above it a row may sit past an id still being written (a reader
   * taking it would skip that id), and a read of one kind could see a row committed after the
   * read of another kind (a command's update before its insert).
   */
  upTo: LogCursor
  limit: number
  /**
   * Commands only: leave out those expired at this time (R7, `commandExpired`: a lifetime passed
   * since the insert's stamp without an update). Absent: every command.
   */
  liveAt?: number
}

export interface MessageFeedRepository {
  /**
   * Where the feed stands now, for a store whose writes commit in draw order (SQLite; PostgreSQL
   * without the PostgreSQL doorbell): everything at or below it is committed, anything committed
   * later is after it. Over the PostgreSQL doorbell, readers take the doorbell's mark instead.
   */
  position(): Promise<LogCursor>
  /** Notifications after `after` up to `upTo`, by stamp. */
  notifications(query: FeedQuery): Promise<NotificationRecord[]>
  /** Commands after `after` up to `upTo`, by stamp (their current row). */
  commands(query: FeedQuery): Promise<CommandRecord[]>
  /** Updated commands with `lastUpdated` after `after.clock` up to `upTo.clock`, by it (each command's latest update). */
  updates(query: FeedQuery): Promise<CommandRecord[]>
}
