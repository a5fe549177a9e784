/**
 * A plugin consumer: one subscribed connection, or one `sg` group (round robin over its members).
 * It is a stream with a cursor: it holds a {@link LogCursor} and, whenever it is kicked (an event
 * that may match, a resync, a plugin change), reads the message log after it up to the log's mark
 * (`log.readAfter` up to `log.mark()`), merges the kinds by stamp, delivers oldest first and
 * advances. Live delivery and the replay after a cursor (P6) are the same read, so nothing is
 * lost or repeated at the seam; one read is in flight per consumer and kicks meanwhile only mark
 * it dirty, so reads coalesce under load.
 *
 * Status: the plugin row is read on every pass. A consumer delivers only while the plugin and
 * its owner are ACTIVE; a new activation (a new `subscriptionId`) moves it to the cursor stored
 * with that activation, taken when it was made, so only later events follow (§4.4), on every
 * instance alike.
 */
import type { CommandRecord } from '../commands/command-ports.js'
import type { NotificationRecord } from '../notifications/notification-ports.js'
import type { Logger } from '../ports.js'
import type { LogCursor } from '../realtime/log-cursor.js'
import { encodeLogCursor } from '../realtime/log-cursor.js'
import type { MessageLog, RecordOf } from '../realtime/message-log.js'
import type { PluginDeliveryItem, PluginMember } from './plugin-delivery-ports.js'
import type { PluginRecord } from './plugin-ports.js'
import type { PluginEventKind } from './plugin-filter.js'
import type { PluginState } from './plugin-state.js'

/** Rows read per kind and pass; more are read in the next pass. */
export const PLUGIN_PAGE = 256

/** What a consumer reads with (one per delivery engine). */
export interface ConsumerFeed {
  readonly log: MessageLog
  readonly logger: Logger
  /** The plugin now (see `readPluginState`). */
  state(pluginId: number): Promise<PluginState | null | undefined>
  /** Where the consumers of the plugin's activation start: the cursor stored when it was made. */
  activationStart(plugin: PluginRecord): Promise<LogCursor>
}

/** The consumer's plugin on this instance (its channel). */
export interface ConsumerHost {
  readonly pluginId: number
  /** P7: the one cId of an activation, shared by every consumer of the plugin. */
  cIdOf(subscriptionId: number): string
  /** The plugin was deleted: every connection goes (P8). */
  gone(): void
  /** The consumer lost its last member. */
  removed(consumer: PluginConsumer): void
}

/**
 * @example
 * const consumer = new PluginConsumer(feed, channel, undefined, await feed.log.mark(), subscriptionId)
 * consumer.add(member)
 * consumer.kick()
 */
export class PluginConsumer {
  private readonly members: PluginMember[] = []
  private next = 0
  private pumping = false
  private dirty = false
  closed = false
  /** The activation `cursor` belongs to; null = none yet (start at the next activation). */
  private activation: number | null
  private cId = ''

  constructor (
    private readonly feed: ConsumerFeed,
    private readonly host: ConsumerHost,
    readonly group: string | undefined,
    private cursor: LogCursor,
    activation: number | null
  ) {
    this.activation = activation
  }

  add (member: PluginMember): void {
    this.members.push(member)
  }

  remove (member: PluginMember): void {
    const index = this.members.indexOf(member)
    if (index >= 0) this.members.splice(index, 1)
    if (this.members.length > 0) return
    this.closed = true
    this.host.removed(this)
  }

  /** Something may have come: read (now, or once the read in flight is done). */
  kick (): void {
    if (this.closed) return
    if (this.pumping) {
      this.dirty = true
      return
    }
    void this.pump()
  }

  private async pump (): Promise<void> {
    this.pumping = true
    const { pluginId } = this.host
    try {
      do {
        this.dirty = false
        const state = await this.feed.state(pluginId)
        if (state === undefined) return this.host.gone()
        if (state === null) {
          // Not active: the next activation decides where delivery resumes.
          this.activation = null
          continue
        }
        const subscriptionId = state.plugin.subscriptionId ?? 0
        if (this.activation !== subscriptionId) {
          this.cursor = await this.feed.activationStart(state.plugin)
          this.activation = subscriptionId
        }
        this.cId = this.host.cIdOf(subscriptionId)
        while (!this.closed && await this.pass(state)) { /* a full page: read on */ }
      } while (this.dirty && !this.closed)
    } catch (error) {
      this.feed.logger.error({ err: error, pluginId }, 'plugin delivery failed')
      // Try again on the next kick; the cursor only moves past delivered events.
    } finally {
      this.pumping = false
    }
  }

  /** One read and delivery; true when a page was full (more may follow at once). */
  private async pass (state: PluginState): Promise<boolean> {
    const { filter, selector } = state
    const { log } = this.feed
    const start = this.cursor
    // Bounded by the mark: above it a row may sit past a stamp still being written (taking it
    // would skip that stamp); what commits meanwhile kicks the consumer again.
    const mark = await log.mark()
    const read = <K extends PluginEventKind>(kind: K): Promise<Array<RecordOf<K>>> =>
      filter.kinds.has(kind) ? log.readAfter(kind, selector, start, mark, PLUGIN_PAGE) : Promise.resolve([])
    const [notifications, commands, updates] = await Promise.all([read('notification'), read('command'), read('command-update')])
    const { items, bound } = mergeByStamp(notifications, commands, updates)
    let { notification, command } = start
    for (const item of items) {
      if (this.closed || this.members.length === 0) return false
      if (item.kind === 'notification') notification = item.record.id
      else if (item.kind === 'command') command = item.record.id
      this.cursor = { clock: item.stamp, notification, command }
      const delivery: PluginDeliveryItem = { kind: item.kind, cursor: encodeLogCursor(this.cursor), cId: this.cId }
      if (item.kind === 'notification') delivery.notification = item.record as NotificationRecord
      else delivery.command = item.record as CommandRecord
      const member = this.members[this.next++ % this.members.length]!
      member.deliver(delivery)
      const wait = member.ready()
      if (wait !== undefined) await wait
    }
    if (this.closed) return false
    // Everything up to the bound (the mark when no kind filled its page) was read and delivered.
    this.cursor = bound === undefined ? mark : { clock: bound, notification, command }
    return bound !== undefined
  }
}

/** One message of the merged read. */
export interface StampedItem {
  kind: PluginEventKind
  record: NotificationRecord | CommandRecord
  /** Its place in the log: the insert stamp, or `lastUpdated` of an update. */
  stamp: number
}

/**
 * Merges the three kinds, each read in stamp order, into one sequence by stamp (one clock stamps
 * every message). When a kind filled its page, nothing after its last stamp is known of it yet:
 * `bound` is the smallest such stamp, and only items at or below it are taken, so the next pass
 * (reading after the bound) cannot put an earlier item after a later one. Undefined: no kind
 * filled its page, everything up to the mark was taken.
 *
 * @example
 * mergeByStamp(notifications, [], []).items.map((item) => item.stamp) // ascending
 */
export function mergeByStamp (
  notifications: NotificationRecord[], commands: CommandRecord[], updates: CommandRecord[], page = PLUGIN_PAGE
): { items: StampedItem[], bound: number | undefined } {
  const lists: StampedItem[][] = [
    notifications.map((record) => ({ kind: 'notification', record, stamp: record.stamp })),
    commands.map((record) => ({ kind: 'command', record, stamp: record.stamp })),
    updates.map((record) => ({ kind: 'command-update', record, stamp: record.lastUpdated }))
  ]
  let bound: number | undefined
  for (const list of lists) {
    if (list.length === page) bound = Math.min(bound ?? Number.POSITIVE_INFINITY, list[list.length - 1]!.stamp)
  }
  const items = lists.flat().filter((item) => bound === undefined || item.stamp <= bound)
  items.sort((a, b) => a.stamp - b.stamp)
  return { items, bound }
}
