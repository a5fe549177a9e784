/**
 * The shapes of plugin delivery (plugin proxy contract §4): what a transport hands in (one
 * {@link PluginMember} per authenticated connection) and what it gets back. The engine is in
 * plugin-delivery.ts (factory), plugin-channel.ts (one plugin on this instance) and
 * plugin-consumer.ts (one cursor and its reads).
 */
import type { CommandRecord } from '../commands/command-ports.js'
import type { NotificationRecord } from '../notifications/notification-ports.js'
import type { LogCursor } from '../realtime/log-cursor.js'
import type { PluginEventKind } from './plugin-filter.js'
import type { PluginPatch, PluginRecord } from './plugin-ports.js'

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
   * tells every instance. Becoming ACTIVE fixes the log cursor the activation starts from.
   */
  update(plugin: PluginRecord, patch: PluginPatch): Promise<boolean>
  /** Deletes a plugin and closes its connections (P8). */
  delete(plugin: PluginRecord): Promise<boolean>
  /** Authenticated connections on this instance. */
  readonly connections: number
  /** Stops listening; connections are closed by their transport. */
  close(): void
}
