/**
 * The message feed: every command insert, command update and notification insert in commit
 * order, read by position rather than by timestamp, so that a reader that resumes from a
 * position loses and repeats nothing, whatever timestamps clients gave their messages.
 *
 * A position has one component per kind: the last notification id, the last command id and the
 * last command-update stamp (`lastUpdated`, which always comes from the message clock). Ids and
 * update stamps grow in draw order, but they are drawn before their rows commit, and on PostgreSQL
 * commits land in any order: `id > after` alone is not a commit-ordered cursor. A read is
 * therefore bounded by `upTo`, a position below which everything is committed (the ordering
 * doorbell's mark, or `position()` where commits follow the draw); a reader never moves past it,
 * so an id drawn but not yet committed is never skipped (issue #24).
 */
import type { CommandRecord } from '../commands/command-ports.js'
import type { NotificationRecord } from '../notifications/notification-ports.js'
import type { MessageSelector } from './message-filter.js'

export interface FeedPosition {
  /** Last notification id read. */
  readonly notification: number
  /** Last command id read (command inserts). */
  readonly command: number
  /** Last command-update stamp read (`lastUpdated` of updated commands). */
  readonly update: number
}

export interface FeedQuery {
  /** Scope, device and names; without names the system notifications are left out (R3). */
  selector: MessageSelector
  /** Items strictly after this component of the position. */
  after: number
  /**
   * And at most this component of a position taken before the read, below which everything is
   * committed (`Doorbell.mark()`, else `position()`). Required: above it a row may sit past an id
   * still being written (a reader taking it would skip that id), and a read of one kind could see
   * a row committed after the read of another kind (a command's update before its insert).
   */
  upTo: number
  limit: number
}

export interface MessageFeedRepository {
  /**
   * Where the feed stands now, for a store whose writes commit in draw order (SQLite; PostgreSQL
   * without the PostgreSQL doorbell): everything at or below it is committed, anything committed
   * later is after it. Over the PostgreSQL doorbell, readers take the doorbell's mark instead.
   */
  position(): Promise<FeedPosition>
  /** Notifications with `after < id <= upTo`, by id. */
  notifications(query: FeedQuery): Promise<NotificationRecord[]>
  /** Commands with `after < id <= upTo`, by id (their current row). */
  commands(query: FeedQuery): Promise<CommandRecord[]>
  /** Updated commands with `after < lastUpdated <= upTo`, by `lastUpdated` (each command's latest update). */
  updates(query: FeedQuery): Promise<CommandRecord[]>
}

const CURSOR = /^(\d{1,16})\.(\d{1,16})\.(\d{1,16})$/

/**
 * The opaque cursor string of a position (plugins send it back to resume).
 *
 * @example
 * encodeFeedCursor({ notification: 12, command: 3, update: 1763820000123 }) // '12.3.1763820000123'
 */
export function encodeFeedCursor (position: FeedPosition): string {
  return `${position.notification}.${position.command}.${position.update}`
}

/**
 * The position a cursor names; undefined for anything that is not a cursor of this server.
 *
 * @example
 * decodeFeedCursor('12.3.1763820000123') // { notification: 12, command: 3, update: 1763820000123 }
 */
export function decodeFeedCursor (cursor: unknown): FeedPosition | undefined {
  if (typeof cursor !== 'string') return undefined
  const match = CURSOR.exec(cursor)
  if (match === null) return undefined
  const [notification, command, update] = [match[1], match[2], match[3]].map(Number) as [number, number, number]
  if (![notification, command, update].every(Number.isSafeInteger)) return undefined
  return { notification, command, update }
}
