/**
 * Plugin delivery (plugin proxy contract §4, P5-P8, P11): the in-process replacement of
 * DeviceHive's Kafka topic per plugin. Framework-free; the WebSocket adapter supplies one
 * {@link PluginMember} per authenticated connection.
 *
 * Delivery is a tailing read of the message feed (core/realtime/message-feed.ts), not a
 * forwarding of bus events: a consumer (one subscribed connection, or one `sg` group) holds a
 * feed position; every event that may concern its plugin "kicks" it, and it reads everything
 * after its position that matches the plugin's stored filter and its owner's current scope,
 * delivers it oldest first and advances. Live delivery and the replay after a cursor are the same
 * read, so nothing is lost or repeated at the seam, and reads coalesce under load (one read in
 * flight per consumer; events meanwhile only mark it dirty).
 *
 * Status: the plugin row is read on every pass. A consumer delivers only while the plugin and
 * its owner are ACTIVE; a new activation (a new `subscriptionId`) moves it to the feed position
 * taken when that activation was made, so only later events follow (§4.4).
 */
import { randomInt, randomUUID } from 'node:crypto'
import { revokePlugin } from '../auth/revocations.js'
import type { CommandRecord } from '../commands/command-ports.js'
import type { ServiceContext } from '../context.js'
import type { NotificationRecord } from '../notifications/notification-ports.js'
import type { DataScope } from '../ports.js'
import type { BusEvent, MessageEvent, ResyncEvent } from '../realtime/bus.js'
import type { RecordOf } from '../realtime/message-log.js'
import type { LogCursor } from '../realtime/log-cursor.js'
import { encodeLogCursor } from '../realtime/log-cursor.js'
import type { MessageSelector } from '../realtime/message-filter.js'
import { nameSelected } from '../realtime/message-filter.js'
import { UserStatus } from '../users/user-ports.js'
import type { PluginEventKind, StoredPluginFilter } from './plugin-filter.js'
import { parseStoredFilter } from './plugin-filter.js'
import { readPluginReach, scopeWithin } from './plugin-grants.js'
import type { PluginPatch, PluginRecord } from './plugin-ports.js'
import { PluginStatus } from './plugin-ports.js'

/** One event for a plugin, with the cursor to resume after it. */
export interface PluginDeliveryItem {
  kind: PluginEventKind
  /** Set for `notification`. */
  notification?: NotificationRecord
  /** Set for `command` and `command-update`. */
  command?: CommandRecord
  /** The consumer's position after this event (P6). */
  cursor: string
  /** One random UUID per activation of the plugin (P7). */
  cId: string
}

/** What the transport provides for one authenticated connection. */
export interface PluginMember {
  deliver(item: PluginDeliveryItem): void
  /** Resolves when the connection can take more (outbound backpressure); undefined = now. */
  ready(): Promise<void> | undefined
  /** The plugin was deleted (P8): the transport closes the connection. */
  gone(): void
}

export interface PluginSubscribeOptions {
  /** Subscription group: connections with the same group share deliveries (round robin). */
  group?: string
  /** Resume after this position; undefined = only events committed from now on. */
  after?: LogCursor
}

/** An authenticated connection of one plugin. */
export interface PluginConnection {
  readonly pluginId: number
  readonly subscribed: boolean
  /** Starts (or keeps, P11) delivery to this connection; resolves once its position is fixed. */
  subscribe(options: PluginSubscribeOptions): Promise<void>
  unsubscribe(): void
  /** The connection closed; the plugin's last one sets it INACTIVE (P5). Idempotent. */
  close(): Promise<void>
}

export interface PluginDelivery {
  /**
   * Binds an authenticated connection to `plugin` and makes the plugin ACTIVE if it is not
   * (P5). Resolves with the plugin as it is afterwards.
   */
  connect(plugin: PluginRecord, member: PluginMember): Promise<{ connection: PluginConnection, plugin: PluginRecord }>
  /**
   * Writes a status or filter change of a plugin (PUT /plugin, authenticate, last close) and
   * tells every instance. Becoming ACTIVE fixes the feed position the activation starts from.
   */
  update(plugin: PluginRecord, patch: PluginPatch): Promise<boolean>
  /** Deletes a plugin and closes its connections (P8). */
  delete(plugin: PluginRecord): Promise<boolean>
  /** Authenticated connections on this instance. */
  readonly connections: number
  /** Stops listening; connections are closed by their transport. */
  close(): void
}

/** Rows read per kind and pass; more are read in the next pass. */
const PAGE = 256

interface PluginState {
  plugin: PluginRecord
  filter: StoredPluginFilter
  selector: MessageSelector
}

interface Activation {
  subscriptionId: number
  position: Promise<LogCursor>
}

/**
 * @example
 * const delivery = createPluginDelivery(ctx)
 * const { connection } = await delivery.connect(plugin, member)
 * await connection.subscribe({})
 */
export function createPluginDelivery (ctx: ServiceContext): PluginDelivery {
  const { store, bus, log, logger } = ctx

  /**
   * Where a new subscription or activation starts: the log's mark once it holds this process's
   * acknowledged writes (at most a short wait), so a write answered before the call is not
   * delivered as if it came after it.
   */
  const startPosition = (): Promise<LogCursor> => log.mark()
  const channels = new Map<number, Channel>()
  /** Feed positions of activations made by this instance, by plugin id. */
  const activations = new Map<number, Activation>()
  let closed = false

  // Listening only while some plugin is connected here (an idle hub holds no bus listener).
  let off: (() => void) | undefined
  const onEvent = (event: BusEvent): void => {
    if (event.kind === 'plugin') {
      channels.get(event.pluginId)?.refresh()
      return
    }
    if (event.kind === 'revoke') return
    for (const channel of channels.values()) channel.route(event)
  }
  function listen (): void {
    if (off === undefined && !closed) off = bus.subscribe(onEvent)
  }
  function unlisten (): void {
    if (channels.size > 0 || off === undefined) return
    off()
    off = undefined
  }

  /** Where the consumers of an activation start: the position taken when it was made. */
  function activationStart (pluginId: number, subscriptionId: number): Promise<LogCursor> {
    const known = activations.get(pluginId)
    if (known !== undefined && known.subscriptionId === subscriptionId) return known.position
    // Made by another instance: the best this one can do is now.
    const position = startPosition()
    activations.set(pluginId, { subscriptionId, position })
    return position
  }

  /** The plugin as delivery sees it now; undefined when deleted, null when nothing may flow. */
  async function readState (pluginId: number): Promise<PluginState | null | undefined> {
    const plugin = await store.plugins.findById(pluginId)
    if (plugin === undefined) return undefined
    if (plugin.status !== PluginStatus.ACTIVE) return null
    const owner = await store.users.findById(plugin.userId)
    if (owner === undefined || owner.status !== UserStatus.Active) return null
    const scope = await readPluginReach(store, plugin, owner)
    const filter = parseStoredFilter(plugin.filter)
    return { plugin, filter, selector: selectorOf(filter, scope) }
  }

  class Channel {
    readonly connections = new Set<Connection>()
    readonly consumers = new Set<Consumer>()
    readonly groups = new Map<string, Consumer>()
    private filter: StoredPluginFilter | undefined
    /** P7: one cId per activation, shared by every consumer of the plugin. */
    private readonly cIds = new Map<number, string>()

    constructor (readonly pluginId: number, filter: string) {
      this.filter = parseStoredFilter(filter)
    }

    /** Cheap routing on the event's keys: kick the consumers only if the event may match. */
    route (event: MessageEvent | ResyncEvent): void {
      if (this.consumers.size === 0) return
      if (event.kind !== 'resync' && this.filter !== undefined && !mayMatch(this.filter, event)) return
      for (const consumer of this.consumers) consumer.kick()
    }

    /** The plugin changed (status, filter) or was deleted. */
    refresh (): void {
      store.plugins.findById(this.pluginId).then((plugin) => {
        if (plugin === undefined) return this.gone()
        this.filter = parseStoredFilter(plugin.filter)
        for (const consumer of this.consumers) consumer.kick()
      }, (error: unknown) => logger.error({ err: error, pluginId: this.pluginId }, 'plugin refresh failed'))
    }

    cIdOf (subscriptionId: number): string {
      let cId = this.cIds.get(subscriptionId)
      if (cId === undefined) {
        if (this.cIds.size > 16) this.cIds.clear()
        cId = randomUUID()
        this.cIds.set(subscriptionId, cId)
      }
      return cId
    }

    gone (): void {
      for (const connection of [...this.connections]) connection.gone()
    }

    drop (connection: Connection): void {
      this.connections.delete(connection)
      if (this.connections.size === 0 && channels.get(this.pluginId) === this) {
        channels.delete(this.pluginId)
        unlisten()
      }
    }
  }

  class Consumer {
    readonly members: Connection[] = []
    private next = 0
    private pumping = false
    private dirty = false
    closed = false
    /** The activation `position` belongs to; null = none yet (start at the next activation). */
    private activation: number | null
    private cId = ''

    constructor (readonly channel: Channel, readonly group: string | undefined, private position: LogCursor, activation: number | null) {
      this.activation = activation
    }

    add (member: Connection): void {
      this.members.push(member)
    }

    remove (member: Connection): void {
      const index = this.members.indexOf(member)
      if (index >= 0) this.members.splice(index, 1)
      if (this.members.length > 0) return
      this.closed = true
      this.channel.consumers.delete(this)
      if (this.group !== undefined) this.channel.groups.delete(this.group)
    }

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
      try {
        do {
          this.dirty = false
          const state = await readState(this.channel.pluginId)
          if (state === undefined) return this.channel.gone()
          if (state === null) {
            // Not active: the next activation decides where delivery resumes.
            if (this.activation !== null) this.activation = null
            continue
          }
          const subscriptionId = state.plugin.subscriptionId ?? 0
          if (this.activation !== subscriptionId) {
            this.position = await activationStart(state.plugin.id, subscriptionId)
            this.activation = subscriptionId
          }
          this.cId = this.channel.cIdOf(subscriptionId)
          while (!this.closed && await this.pass(state)) { /* a full page: read on */ }
        } while (this.dirty && !this.closed)
      } catch (error) {
        logger.error({ err: error, pluginId: this.channel.pluginId }, 'plugin delivery failed')
        // Try again on the next event; the position only moves past delivered events.
      } finally {
        this.pumping = false
      }
    }

    /** One read and delivery; true when a page was full (more may follow at once). */
    private async pass (state: PluginState): Promise<boolean> {
      const { filter, selector } = state
      const start = this.position
      // Bounded by the mark: above it a row may sit past a stamp still being written (taking it
      // would skip that stamp); what commits meanwhile waits for the next pass.
      const mark = await log.mark()
      const read = <K extends PluginEventKind>(kind: K): Promise<Array<RecordOf<K>>> =>
        filter.kinds.has(kind) ? log.readAfter(kind, selector, start, mark, PAGE) : Promise.resolve([])
      const [notifications, commands, updates] = await Promise.all([read('notification'), read('command'), read('command-update')])
      const { items, bound } = mergeByCommit(notifications, commands, updates)
      let { notification, command } = start
      for (const item of items) {
        if (this.closed || this.members.length === 0) return false
        if (item.kind === 'notification') notification = item.record.id
        else if (item.kind === 'command') command = item.record.id
        this.position = { clock: item.key, notification, command }
        const member = this.members[this.next++ % this.members.length]!
        const delivery: PluginDeliveryItem = { kind: item.kind, cursor: encodeLogCursor(this.position), cId: this.cId }
        if (item.kind === 'notification') delivery.notification = item.record as NotificationRecord
        else delivery.command = item.record as CommandRecord
        member.member.deliver(delivery)
        const wait = member.member.ready()
        if (wait !== undefined) await wait
      }
      if (this.closed) return false
      // Everything up to the bound (the mark when no kind filled its page) was read and delivered.
      this.position = bound === undefined ? mark : { clock: bound, notification, command }
      return bound !== undefined
    }
  }

  class Connection implements PluginConnection {
    private consumer: Consumer | undefined
    private closed = false

    constructor (readonly channel: Channel, readonly member: PluginMember) {}

    get pluginId (): number {
      return this.channel.pluginId
    }

    get subscribed (): boolean {
      return this.consumer !== undefined
    }

    async subscribe (options: PluginSubscribeOptions): Promise<void> {
      const current = this.consumer
      // P11: the same subscription again changes nothing; a new group moves the connection.
      if (current !== undefined && current.group === options.group) return
      const { channel } = this
      const joined = options.group === undefined ? undefined : channel.groups.get(options.group)
      let consumer: Consumer
      if (joined !== undefined) {
        consumer = joined
      } else {
        const plugin = await store.plugins.findById(channel.pluginId)
        const position = options.after ?? await startPosition()
        const activation = plugin?.status === PluginStatus.ACTIVE ? plugin.subscriptionId ?? 0 : null
        // The group may have been formed while this one read.
        const raced = options.group === undefined ? undefined : channel.groups.get(options.group)
        if (raced !== undefined) consumer = raced
        else {
          consumer = new Consumer(channel, options.group, position, activation)
          channel.consumers.add(consumer)
          if (options.group !== undefined) channel.groups.set(options.group, consumer)
        }
      }
      if (this.closed) return
      current?.remove(this)
      consumer.add(this)
      this.consumer = consumer
      consumer.kick()
    }

    unsubscribe (): void {
      this.consumer?.remove(this)
      this.consumer = undefined
    }

    gone (): void {
      this.unsubscribe()
      this.member.gone()
    }

    async close (): Promise<void> {
      if (this.closed) return
      this.closed = true
      this.unsubscribe()
      this.channel.drop(this)
      if (channels.has(this.pluginId)) return
      // P5: the plugin's last connection on this instance closed.
      const plugin = await store.plugins.findById(this.pluginId)
      // Deleted, already inactive, or a new connection came meanwhile.
      if (plugin === undefined || plugin.status === PluginStatus.INACTIVE || channels.has(this.pluginId)) return
      await delivery.update(plugin, { status: PluginStatus.INACTIVE, subscriptionId: null })
    }
  }

  const delivery: PluginDelivery = {
    async connect (plugin, member) {
      let channel = channels.get(plugin.id)
      if (channel === undefined) {
        channel = new Channel(plugin.id, plugin.filter)
        channels.set(plugin.id, channel)
        listen()
      }
      const connection = new Connection(channel, member)
      channel.connections.add(connection)
      if (plugin.status !== PluginStatus.ACTIVE) {
        await delivery.update(plugin, { status: PluginStatus.ACTIVE })
        plugin = await store.plugins.findById(plugin.id) ?? plugin
      }
      return { connection, plugin }
    },

    async update (plugin, patch) {
      const activating = patch.status === PluginStatus.ACTIVE && (plugin.status !== PluginStatus.ACTIVE || plugin.subscriptionId === null)
      const write: PluginPatch = { ...patch }
      if (activating) {
        write.subscriptionId = randomInt(1, 2 ** 48)
        // Taken before the change commits: every event after the activation follows.
        const position = startPosition()
        position.catch(() => undefined)
        activations.set(plugin.id, { subscriptionId: write.subscriptionId, position })
        await position
      }
      // Grants that shrink end the open waits and subscriptions of the plugin's tokens.
      const narrows = patch.grants !== undefined && !scopeWithin(plugin.grants, patch.grants)
      return store.transaction(async (tx) => {
        const changed = await tx.plugins.update(plugin.id, write)
        if (changed) await ringPlugin(plugin, tx)
        if (changed && narrows) await revokePlugin(bus, plugin, tx)
        return changed
      })
    },

    async delete (plugin) {
      const deleted = await store.transaction(async (tx) => {
        const done = await tx.plugins.delete(plugin.id)
        if (done) await ringPlugin(plugin, tx)
        if (done) await revokePlugin(bus, plugin, tx)
        return done
      })
      activations.delete(plugin.id)
      return deleted
    },

    get connections () {
      let count = 0
      for (const channel of channels.values()) count += channel.connections.size
      return count
    },

    close () {
      if (closed) return
      closed = true
      off?.()
      off = undefined
    }
  }

  async function ringPlugin (plugin: PluginRecord, tx: typeof store): Promise<void> {
    await bus.publish({ kind: 'plugin', pluginId: plugin.id, topic: plugin.topicName }, tx)
  }

  return delivery
}

/** The SQL side of the filter: device or networks/types, intersected with the owner's scope; names. */
function selectorOf (filter: StoredPluginFilter, scope: DataScope): MessageSelector {
  const narrow = (owner: 'all' | readonly number[], wanted: readonly number[] | undefined): 'all' | readonly number[] => {
    if (wanted === undefined) return owner
    if (owner === 'all') return wanted
    return wanted.filter((id) => owner.includes(id))
  }
  return {
    scope: { networkIds: narrow(scope.networkIds, filter.networkIds), deviceTypeIds: narrow(scope.deviceTypeIds, filter.deviceTypeIds) },
    deviceIds: filter.deviceId === undefined ? undefined : [filter.deviceId],
    names: filter.names
  }
}

/** The filter rules that the event's routing keys can decide (scope is left to the read). */
function mayMatch (filter: StoredPluginFilter, event: MessageEvent): boolean {
  if (!filter.kinds.has(event.kind)) return false
  if (filter.deviceId !== undefined && event.deviceId !== filter.deviceId) return false
  if (filter.networkIds !== undefined && (event.networkId === null || !filter.networkIds.includes(event.networkId))) return false
  if (filter.deviceTypeIds !== undefined && (event.deviceTypeId === null || !filter.deviceTypeIds.includes(event.deviceTypeId))) return false
  return nameSelected(filter.names, event.name)
}

interface FeedItem {
  kind: PluginEventKind
  record: NotificationRecord | CommandRecord
  /** The item's stamp: its place in the log. */
  key: number
}

/**
 * Merges the three kinds, each read in stamp order, into one sequence by stamp (one clock stamps
 * every message). When a kind filled its page, nothing after its last stamp is known of it yet:
 * `bound` is the smallest such stamp, and only items at or below it are taken, so the next pass
 * (reading after the bound) cannot put an earlier item after a later one. Undefined: no kind
 * filled its page, everything up to the mark was taken.
 */
function mergeByCommit (notifications: NotificationRecord[], commands: CommandRecord[], updates: CommandRecord[]): { items: FeedItem[], bound: number | undefined } {
  const lists: FeedItem[][] = [
    notifications.map((record) => ({ kind: 'notification', record, key: record.stamp })),
    commands.map((record) => ({ kind: 'command', record, key: record.stamp })),
    updates.map((record) => ({ kind: 'command-update', record, key: record.lastUpdated }))
  ]
  let bound: number | undefined
  for (const list of lists) {
    if (list.length === PAGE) bound = Math.min(bound ?? Number.POSITIVE_INFINITY, list[list.length - 1]!.key)
  }
  const items = lists.flat().filter((item) => bound === undefined || item.key <= bound)
  items.sort((a, b) => a.key - b.key)
  return { items, bound }
}
