/**
 * One plugin on this instance: its authenticated connections, its consumers (a lone subscribed
 * connection, or one per `sg` group), its cIds (P7), and its place in the hub's router. The
 * channel registers in the router like every stream, with the routing keys of the plugin's stored
 * filter, and checks each event with the one filter of live messages (`selects`,
 * message-filter.ts) before it kicks its consumers; a `resync` reads the plugin again (as a
 * `plugin` event does: it may have been lost with the rest) and kicks them all. The plugin's reach
 * is left to the read (it changes with the owner's assignments, which no key follows).
 */
import { randomUUID } from 'node:crypto'
import type { Store } from '../ports.js'
import { isMessageEvent } from '../realtime/bus.js'
import type { MessageSelector } from '../realtime/message-filter.js'
import { selects } from '../realtime/message-filter.js'
import type { RoutedEvent, Router } from '../realtime/router.js'
import { routingKeys } from '../realtime/router.js'
import type { PluginConnection, PluginMember, PluginSubscribeOptions } from './plugin-delivery-ports.js'
import type { ConsumerFeed, ConsumerHost } from './plugin-consumer.js'
import { PluginConsumer } from './plugin-consumer.js'
import type { StoredPluginFilter } from './plugin-filter.js'
import { parseStoredFilter } from './plugin-filter.js'
import { PluginStatus } from './plugin-ports.js'
import { pluginSelector } from './plugin-state.js'

/** What channels share (one per delivery engine). */
export interface ChannelRuntime extends ConsumerFeed {
  readonly store: Store
  readonly router: Router
  /** The channel's last connection closed (the engine forgets it; P5). */
  released(channel: PluginChannel): Promise<void>
}

/** Activations remembered per channel (P7 cIds); older ones are forgotten past this. */
const MAX_CIDS = 16

/**
 * @example
 * const channel = new PluginChannel(runtime, plugin.id, plugin.filter)
 * const connection = channel.open(member)
 */
export class PluginChannel implements ConsumerHost {
  readonly connections = new Set<ChannelConnection>()
  readonly consumers = new Set<PluginConsumer>()
  readonly groups = new Map<string, PluginConsumer>()
  private readonly cIds = new Map<number, string>()
  private filterText: string
  private unregister: () => void

  constructor (readonly runtime: ChannelRuntime, readonly pluginId: number, filter: string) {
    this.filterText = filter
    this.unregister = this.register(filter)
  }

  /** Registers in the router with the keys of `filter`; a fresh listener per registration. */
  private register (filterText: string): () => void {
    const filter: StoredPluginFilter = parseStoredFilter(filterText)
    const selector: MessageSelector = pluginSelector(filter)
    const listener = (event: RoutedEvent): void => {
      // A resync may stand for a lost `plugin` event too: the plugin is read again (its filter
      // and the keys it registers by), then its consumers read.
      if (event.kind === 'resync') this.refresh()
      else if (isMessageEvent(event) && filter.kinds.has(event.kind) && selects(selector, event)) this.kick()
    }
    return this.runtime.router.register(routingKeys([...filter.kinds], selector), listener)
  }

  /** A new connection of the plugin. */
  open (member: PluginMember): PluginConnection {
    const connection = new ChannelConnection(this, member)
    this.connections.add(connection)
    return connection
  }

  kick (): void {
    for (const consumer of this.consumers) consumer.kick()
  }

  /** The plugin changed (status, filter; a `plugin` event) or was deleted. */
  refresh (): void {
    this.runtime.store.plugins.findById(this.pluginId).then((plugin) => {
      if (plugin === undefined) return this.gone()
      if (plugin.filter !== this.filterText) {
        // The new keys first: nothing published meanwhile falls between the two registrations.
        const previous = this.unregister
        this.unregister = this.register(plugin.filter)
        this.filterText = plugin.filter
        previous()
      }
      this.kick()
    }, (error: unknown) => this.runtime.logger.error({ err: error, pluginId: this.pluginId }, 'plugin refresh failed'))
  }

  cIdOf (subscriptionId: number): string {
    let cId = this.cIds.get(subscriptionId)
    if (cId === undefined) {
      if (this.cIds.size > MAX_CIDS) this.cIds.clear()
      cId = randomUUID()
      this.cIds.set(subscriptionId, cId)
    }
    return cId
  }

  gone (): void {
    for (const connection of [...this.connections]) connection.gone()
  }

  removed (consumer: PluginConsumer): void {
    this.consumers.delete(consumer)
    if (consumer.group !== undefined && this.groups.get(consumer.group) === consumer) this.groups.delete(consumer.group)
  }

  /** The consumer of a new subscription: the group's if it exists, else a new one at `after` (or the mark). */
  async consumerFor (options: PluginSubscribeOptions): Promise<PluginConsumer> {
    const joined = options.group === undefined ? undefined : this.groups.get(options.group)
    if (joined !== undefined) return joined
    const { store, log } = this.runtime
    const plugin = await store.plugins.findById(this.pluginId)
    // The log's mark once it holds this process's acknowledged writes: a write answered before
    // the subscription is not delivered as if it came after it.
    const cursor = options.after ?? await log.mark()
    const activation = plugin?.status === PluginStatus.ACTIVE ? plugin.subscriptionId ?? 0 : null
    // The group may have been formed while this one read.
    const raced = options.group === undefined ? undefined : this.groups.get(options.group)
    if (raced !== undefined) return raced
    const consumer = new PluginConsumer(this.runtime, this, options.group, cursor, activation)
    this.consumers.add(consumer)
    if (options.group !== undefined) this.groups.set(options.group, consumer)
    return consumer
  }

  /** A connection closed; the last one releases the channel. */
  async drop (connection: ChannelConnection): Promise<void> {
    this.connections.delete(connection)
    if (this.connections.size === 0) await this.runtime.released(this)
  }

  /** Leaves the router (the channel is forgotten). */
  close (): void {
    this.unregister()
  }
}

/** One authenticated connection of the channel's plugin. */
class ChannelConnection implements PluginConnection {
  private consumer: PluginConsumer | undefined
  private closed = false

  constructor (readonly channel: PluginChannel, readonly member: PluginMember) {}

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
    const consumer = await this.channel.consumerFor(options)
    if (this.closed) {
      // Closed while the cursor was taken: a consumer made for it alone must not stay behind.
      consumer.add(this.member)
      consumer.remove(this.member)
      return
    }
    current?.remove(this.member)
    consumer.add(this.member)
    this.consumer = consumer
    consumer.kick()
  }

  unsubscribe (): void {
    this.consumer?.remove(this.member)
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
    await this.channel.drop(this)
  }
}
