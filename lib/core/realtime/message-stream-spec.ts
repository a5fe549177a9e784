/**
 * The one stream spec of every message kind (notifications, command inserts, command updates):
 * what the stream engine (message-stream.ts) reads, filters and delivers, from the message log.
 * A service passes the kind, the selector, the cursor, the limits, the principal and the view;
 * the rules that differ by kind (name, cursor, what is fresh, what is live) are the few lines
 * of {@link KindRules}.
 */
import type { AuthService } from '../auth/auth-service.js'
import type { Principal } from '../auth/principal.js'
import { revokesPrincipal } from '../auth/revocations.js'
import type { Clock } from '../time.js'
import type { MessageEvent, MessageKind, RevokeEvent } from './bus.js'
import type { WaiterRegistry } from './cancellation.js'
import type { LogCursor } from './log-cursor.js'
import type { MessageSelector } from './message-filter.js'
import { inMessageScope, nameSelected, selects } from './message-filter.js'
import type { MessageLog, RecordOf } from './message-log.js'
import type { CommandRecord, NotificationRecord } from './message-records.js'
import { commandExpired } from './message-records.js'
import type { MessageStreamSpec } from './message-stream.js'
import { NOTHING_AFTER } from './newest-stamps.js'
import type { RoutedResync, Router, RoutingKeys } from './router.js'
import { routingKeys } from './router.js'

/** What a stream is built from (a service context has all of it). */
export interface StreamContext {
  router: Router
  waiters: WaiterRegistry
  log: MessageLog
  clock: Clock
  auth: Pick<AuthService, 'rightsHeld'>
}

export interface StreamSpecOptions<K extends MessageKind, V> {
  /** Scope, devices and names of what the stream delivers. */
  selector: MessageSelector
  /** Whose rights the stream runs under: a `revoke` for them stops it. */
  principal: Principal | undefined
  /** The item an event names: the record it carries, else one shared read (shared-read.ts). */
  load(event: MessageEvent): Promise<RecordOf<K> | undefined>
  /** The delivered view of a record (memoised: one view per record for every stream). */
  view(record: RecordOf<K>): V
  /** Backlog cursor: items after it; absent = live only. */
  after?: LogCursor
  /** Most backlog items. */
  backlogLimit: number
  /** Backlog page size (default 100); a long poll reads its whole answer as one page. */
  pageSize?: number
  /** Only this command's updates (`GET …/command/{id}/poll`). */
  commandId?: number
  /** Replaces the log's mark at open (the command wait reads its command instead: one query, not two). */
  openMark?(): Promise<LogCursor>
  /** Called once when the stream closes (a device's presence while it listens for its commands). */
  onClose?(): void
}

/** The rules that differ by kind. */
interface KindRules {
  name(record: NotificationRecord | CommandRecord): string
  /** The server's stamp a reader resumes after: the insert's, or `lastUpdated` for an update. Never a client's timestamp. */
  cursorOf(record: NotificationRecord | CommandRecord): number
  keyOf(record: NotificationRecord | CommandRecord): string | number
  /** Whether a record is after the mark a stream opened at. */
  fresh(record: NotificationRecord | CommandRecord, mark: LogCursor): boolean
  /** Whether a live record is still handed out at `now` (R7 for commands; only updated commands as updates). */
  live(record: NotificationRecord | CommandRecord, now: number): boolean
  /** Whether the backlog read leaves out expired commands (R7). */
  readsLive: boolean
}

const RULES: Readonly<Record<MessageKind, KindRules>> = {
  notification: {
    name: (n) => (n as NotificationRecord).notification,
    cursorOf: (n) => n.stamp,
    keyOf: (n) => n.id,
    fresh: (n, mark) => n.id > mark.notification,
    live: () => true,
    readsLive: false
  },
  command: {
    name: (c) => (c as CommandRecord).command,
    cursorOf: (c) => c.stamp,
    keyOf: (c) => c.id,
    fresh: (c, mark) => c.id > mark.command,
    live: (c, now) => !commandExpired(c as CommandRecord, now),
    readsLive: true
  },
  'command-update': {
    name: (c) => (c as CommandRecord).command,
    cursorOf: (c) => (c as CommandRecord).lastUpdated,
    keyOf: (c) => `${c.id}:${(c as CommandRecord).lastUpdated}`,
    fresh: (c, mark) => (c as CommandRecord).lastUpdated > mark.clock,
    live: (c) => (c as CommandRecord).isUpdated,
    readsLive: false
  }
}

/**
 * The spec of a stream of `kind` (subscriptions, SSE and long polls alike).
 *
 * @example
 * const spec = createStreamSpec(ctx, 'notification', { selector, principal, load, view, after: cursorAtClock(ts), backlogLimit: 100 })
 * const stream = await openMessageStream(spec)
 */
export function createStreamSpec<K extends MessageKind, V> (
  ctx: StreamContext, kind: K, options: StreamSpecOptions<K, V>
): MessageStreamSpec<RecordOf<K>, V> {
  return new KindStreamSpec(ctx, kind, options)
}

/** One object with prototype methods: thousands of polls may be parked. */
class KindStreamSpec<K extends MessageKind, V> implements MessageStreamSpec<RecordOf<K>, V> {
  readonly router: Router
  readonly waiters: WaiterRegistry
  readonly keys: RoutingKeys
  readonly after: LogCursor | undefined
  readonly backlogLimit: number
  readonly pageSize: number | undefined
  readonly load: (event: MessageEvent) => Promise<RecordOf<K> | undefined>
  readonly openMark: (() => Promise<LogCursor>) | undefined
  readonly onClose: (() => void) | undefined
  private readonly rules: KindRules
  private readonly selector: MessageSelector

  constructor (private readonly ctx: StreamContext, private readonly kind: K, private readonly options: StreamSpecOptions<K, V>) {
    this.router = ctx.router
    this.waiters = ctx.waiters
    this.selector = options.selector
    this.keys = routingKeys([kind], options.selector)
    this.after = options.after
    this.backlogLimit = options.backlogLimit
    this.pageSize = options.pageSize
    this.load = options.load
    this.openMark = options.openMark
    this.onClose = options.onClose
    this.rules = RULES[kind]
  }

  resyncKey (): string {
    return JSON.stringify([this.kind, this.options.commandId, this.selector])
  }

  revokedBy (event: RevokeEvent): boolean {
    return revokesPrincipal(event, this.options.principal)
  }

  rightsHeld (resync: RoutedResync): Promise<boolean> {
    const { principal } = this.options
    if (principal === undefined) return Promise.resolve(true)
    let check = resync.checks.get(principal)
    if (check === undefined) resync.checks.set(principal, check = this.ctx.auth.rightsHeld(principal))
    return check
  }

  routes (event: MessageEvent): boolean {
    const { commandId } = this.options
    if (commandId !== undefined && event.id !== commandId) return false
    return event.kind === this.kind && selects(this.selector, event)
  }

  mark (): Promise<LogCursor> {
    return this.ctx.log.mark()
  }

  // What the log knows was released for the stream's one device after `after`, without a read.
  known (after: LogCursor, upTo: LogCursor): ReadonlyArray<RecordOf<K>> | undefined {
    const { deviceIds } = this.selector
    if (deviceIds?.length !== 1) return undefined
    const known = this.ctx.log.knownAfter(this.kind, deviceIds[0]!, after.clock)
    if (known === undefined || known.length === 0) return known
    // A cursor that resumes by id, or a record above the reader's mark (it arrives live): read.
    const record = known[0]!
    if (after.notification > 0 || after.command > 0 || this.rules.cursorOf(record) > upTo.clock) return undefined
    return this.matches(record) ? known : NOTHING_AFTER as ReadonlyArray<RecordOf<K>>
  }

  readAfter (after: LogCursor, upTo: LogCursor, limit: number): Promise<Array<RecordOf<K>>> {
    const liveAt = this.rules.readsLive ? this.ctx.clock.now() : undefined
    return this.ctx.log.readAfter(this.kind, this.selector, after, upTo, limit, liveAt)
  }

  matches (record: RecordOf<K>): boolean {
    const { commandId } = this.options
    if (commandId !== undefined && record.id !== commandId) return false
    if (!inMessageScope(this.selector, record) || !nameSelected(this.selector.names, this.rules.name(record))) return false
    return this.rules.live(record, this.ctx.clock.now())
  }

  fresh (record: RecordOf<K>, mark: LogCursor): boolean {
    return this.rules.fresh(record, mark)
  }

  cursorOf (record: RecordOf<K>): number {
    return this.rules.cursorOf(record)
  }

  view (record: RecordOf<K>): V {
    return this.options.view(record)
  }

  keyOf (record: RecordOf<K>): string | number {
    return this.rules.keyOf(record)
  }
}
