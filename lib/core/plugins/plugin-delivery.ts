/**
 * Plugin delivery (plugin proxy contract §4, P5-P8, P11): the in-process replacement of
 * DeviceHive's Kafka topic per plugin. Framework-free; the WebSocket adapter supplies one
 * {@link PluginMember} per authenticated connection.
 *
 * Not a second system: a plugin is a stream with a cursor, plus its own connection, group and
 * status logic. Each connected plugin is a channel (plugin-channel.ts) registered in the hub's
 * router with the keys of its stored filter and checked with the one live filter
 * (message-filter.ts); each subscription or group is a consumer (plugin-consumer.ts) that reads
 * the message log after its {@link LogCursor} up to the log's mark. This file is the factory:
 * connect, status and filter changes, delete, and the activation cursors.
 */
import { randomInt } from 'node:crypto'
import { revokePlugin } from '../auth/revocations.js'
import type { ServiceContext } from '../context.js'
import type { Store } from '../ports.js'
import type { LogCursor } from '../realtime/log-cursor.js'
import type { RoutedEvent } from '../realtime/router.js'
import type { ChannelRuntime } from './plugin-channel.js'
import { PluginChannel } from './plugin-channel.js'
import type { PluginDelivery } from './plugin-delivery-ports.js'
import { scopeWithin } from './plugin-grants.js'
import type { PluginPatch, PluginRecord } from './plugin-ports.js'
import { PluginStatus } from './plugin-ports.js'
import { readPluginState } from './plugin-state.js'

export type { PluginConnection, PluginDelivery, PluginDeliveryItem, PluginMember, PluginSubscribeOptions } from './plugin-delivery-ports.js'

/** An activation stored without its cursor (an older version made it) and where this instance starts it. */
interface UnstoredActivation {
  subscriptionId: number
  cursor: Promise<LogCursor>
}

/**
 * @example
 * const delivery = createPluginDelivery(ctx)
 * const { connection } = await delivery.connect(plugin, member)
 * await connection.subscribe({})
 */
export function createPluginDelivery (ctx: ServiceContext): PluginDelivery {
  const { store, bus, log, router, logger } = ctx
  const channels = new Map<number, PluginChannel>()
  /** Starts of activations stored without a cursor, by plugin id: one "now" per activation here. */
  const unstored = new Map<number, UnstoredActivation>()
  /** P5 writes in flight (a last connection closed), by plugin id: a new connection waits for them. */
  const closing = new Map<number, Promise<void>>()
  let closed = false

  // Plugin changes reach the channels through the router too; registered only while some plugin
  // is connected here (an idle hub holds no listener).
  let offPlugins: (() => void) | undefined
  const onPlugin = (event: RoutedEvent): void => {
    if (event.kind === 'plugin') channels.get(event.pluginId)?.refresh()
  }

  const runtime: ChannelRuntime = {
    store,
    log,
    logger,
    router,
    state: (pluginId) => readPluginState(store, pluginId),
    activationStart (plugin) {
      if (plugin.activationCursor !== null) return Promise.resolve(plugin.activationCursor)
      const subscriptionId = plugin.subscriptionId ?? 0
      const known = unstored.get(plugin.id)
      if (known !== undefined && known.subscriptionId === subscriptionId) return known.cursor
      // Made by a version that did not store its cursor: the best this instance can do is now.
      const cursor = log.mark()
      unstored.set(plugin.id, { subscriptionId, cursor })
      return cursor
    },
    async released (channel) {
      if (channels.get(channel.pluginId) === channel) {
        channels.delete(channel.pluginId)
        channel.close()
        if (channels.size === 0) {
          offPlugins?.()
          offPlugins = undefined
        }
      }
      const { pluginId } = channel
      const done = lastClosed(pluginId)
      closing.set(pluginId, done)
      try {
        await done
      } finally {
        if (closing.get(pluginId) === done) closing.delete(pluginId)
      }
    }
  }

  /** P5: the plugin's last connection on this instance closed. */
  async function lastClosed (pluginId: number): Promise<void> {
    if (channels.has(pluginId)) return
    const plugin = await store.plugins.findById(pluginId)
    // Deleted, already inactive, or a new connection came meanwhile.
    if (plugin === undefined || plugin.status === PluginStatus.INACTIVE || channels.has(pluginId)) return
    await delivery.update(plugin, { status: PluginStatus.INACTIVE, subscriptionId: null })
  }

  /** The channel of `plugin`, made (and registered) on its first connection. */
  function channelOf (plugin: PluginRecord): PluginChannel {
    let channel = channels.get(plugin.id)
    if (channel === undefined) {
      channel = new PluginChannel(runtime, plugin.id, plugin.filter)
      channels.set(plugin.id, channel)
      if (!closed) offPlugins ??= router.register({ kinds: ['plugin'] }, onPlugin)
    }
    return channel
  }

  async function ringPlugin (plugin: PluginRecord, tx: Store): Promise<void> {
    await bus.publish({ kind: 'plugin', pluginId: plugin.id, topic: plugin.topicName }, tx)
  }

  const delivery: PluginDelivery = {
    async connect (plugin, member) {
      const connection = channelOf(plugin).open(member)
      const pending = closing.get(plugin.id)
      if (pending !== undefined) {
        // The last connection's INACTIVE may land after `plugin` was read: decide on what it left.
        await pending.catch(() => undefined)
        plugin = await store.plugins.findById(plugin.id) ?? plugin
      }
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
        // Taken before the change commits (once the mark holds this process's acknowledged
        // writes) and stored with it: on every instance, every event after the activation
        // follows and none answered before it, whenever that instance comes to see the change.
        write.activationCursor = await log.mark()
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
      unstored.delete(plugin.id)
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
      for (const channel of channels.values()) channel.close()
      offPlugins?.()
      offPlugins = undefined
    }
  }

  return delivery
}
