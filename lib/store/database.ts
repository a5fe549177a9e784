/**
 * The one Kysely database interface for every dialect. Dialect-neutral column types:
 * timestamps are integer epoch ms (bigint), booleans are 0/1 integers, JSON is TEXT (so key
 * order is kept exactly as received; PostgreSQL's jsonb would reorder keys).
 */
import type { ColumnType, Generated } from 'kysely'

/** int8 on PostgreSQL; the pg driver is told to parse it to a JS number. */
type Int = ColumnType<number, number, number>
type BoolInt = ColumnType<number, number | undefined, number>

export interface UsersTable {
  id: Generated<number>
  login: string
  password_hash: string
  role: number
  status: number
  login_attempts: ColumnType<number, number | undefined, number>
  last_login: number | null
  data: string | null
  intro_reviewed: BoolInt
  all_device_types_available: BoolInt
  /** Migration 0003: incremented on every change of role, status or password. */
  token_version: ColumnType<number, number | undefined, number>
  /** Migration 0008: the id of the one token a password change spared (auth/token-id.ts). */
  kept_token: ColumnType<string | null, string | null | undefined, string | null>
}

export interface NamedEntityTable {
  id: Generated<number>
  name: string
  description: string | null
  entity_version: ColumnType<number, number | undefined, number>
}

export interface UserNetworksTable {
  user_id: Int
  network_id: Int
}

export interface UserDeviceTypesTable {
  user_id: Int
  device_type_id: Int
}

export interface DevicesTable {
  /** Internal key, never exposed; `device_id` is the client-chosen id. */
  id: Generated<number>
  device_id: string
  name: string
  data: string | null
  network_id: Int
  device_type_id: Int
  is_blocked: BoolInt
}

export interface DevicePresenceTable {
  device_id: string
  last_seen: Int
  /** 1 while the device is announced online ($device-online sent, no $device-offline since). */
  online: BoolInt
}

export interface CommandsTable {
  id: Generated<number>
  device_id: string
  network_id: Int
  device_type_id: Int
  user_id: number | null
  command: string
  parameters: string | null
  lifetime: number | null
  status: string | null
  result: string | null
  timestamp: Int
  last_updated: Int
  is_updated: BoolInt
  /** Migration 0003: `devices.id` of the device written for (null: gone before 0003). */
  device_key: ColumnType<number | null, number | null | undefined, number | null>
}

export interface NotificationsTable {
  id: Generated<number>
  device_id: string
  network_id: number | null
  device_type_id: number | null
  notification: string
  parameters: string | null
  timestamp: Int
  /** Migration 0003: `devices.id` of the device written for (null: gone before 0003). */
  device_key: ColumnType<number | null, number | null | undefined, number | null>
}

export interface ConfigurationTable {
  name: string
  value: string
  entity_version: ColumnType<number, number | undefined, number>
}

export interface PluginsTable {
  id: Generated<number>
  name: string
  description: string | null
  topic_name: string
  filter: string
  status: number
  subscription_id: number | null
  user_id: Int
  parameters: string | null
  /** Migration 0007: the registering or updating token's networks and device types (`*` all, else comma-separated ids). */
  network_grant: ColumnType<string, string | undefined, string>
  device_type_grant: ColumnType<string, string | undefined, string>
  /** Migration 0019: where activation `subscription_id` starts, `subscriptionId@cursor` (repositories/plugins.ts). */
  activation_cursor: ColumnType<string | null, string | null | undefined, string | null>
}

export interface ServerSecretsTable {
  name: string
  value: string
}

/** Migration 0003: histories of deleted devices still to remove (background batches). */
export interface MessagePurgeTable {
  id: Generated<number>
  device_id: string
  device_key: number | null
}

/** Migration 0010: durable MQTT subscriptions, one row per (user, client id, topic filter). */
export interface MqttSubscriptionsTable {
  user_id: Int
  client_id: string
  topic: string
  qos: number
  /** Server stamp (epoch ms) of the last command the client acknowledged; null = none yet. */
  cursor: ColumnType<number | null, number | null | undefined, number | null>
  created_at: Int
  /** Migration 0012: when the session expires (epoch ms), set as its connection ends; null = connected, or never. */
  expires_at: ColumnType<number | null, number | null | undefined, number | null>
}

/** Migration 0011: the connection holding a durable MQTT session, while it is connected. */
export interface MqttSessionHoldersTable {
  user_id: Int
  client_id: string
  holder: string
  since: Int
  /** Migration 0014: the session expiry interval in ms; null = never expires (then the lease does not matter). */
  expiry_ms: ColumnType<number | null, number | null | undefined, number | null>
  /** Migration 0014: until when the holding instance vouches for the connection (epoch ms), renewed while it runs. */
  lease_until: ColumnType<number | null, number | null | undefined, number | null>
}

export interface Database {
  users: UsersTable
  networks: NamedEntityTable
  device_types: NamedEntityTable
  user_networks: UserNetworksTable
  user_device_types: UserDeviceTypesTable
  devices: DevicesTable
  device_presence: DevicePresenceTable
  commands: CommandsTable
  notifications: NotificationsTable
  configuration: ConfigurationTable
  plugins: PluginsTable
  server_secrets: ServerSecretsTable
  message_purge: MessagePurgeTable
  mqtt_subscriptions: MqttSubscriptionsTable
  mqtt_session_holders: MqttSessionHoldersTable
}
