/**
 * Command and notification writes on PostgreSQL as ONE statement each, for a whole batch: the
 * message clock step, the INSERT/UPDATE and (with a ring) the `pg_notify` of every row's
 * doorbell event. Sent outside a transaction it commits by itself: one round trip, and the
 * clock's row lock is held only for that statement and its commit. Input travels as arrays
 * (`unnest ... with ordinality`), so the statement text is the same for every batch size and
 * rows keep the order given (ids and stamps follow it).
 *
 * `device_key` (migration 0003) is the current device's internal key, as in the portable
 * repositories (`currentDeviceKey`): an update only reaches a command of the device that exists now.
 *
 * The doorbell payload is built in SQL in the wire form of lib/doorbells/postgres-doorbell.ts
 * (`[kind, id, deviceId, networkId, deviceTypeId, name]`, a JSON array; its decoder accepts it).
 */
import type { Kysely, RawBuilder } from 'kysely'
import { sql } from 'kysely'
import type { CommandPatch, CommandRecord, NewCommand, StoreRing } from '../../core/commands/command-ports.js'
import type { NewNotification, NotificationRecord } from '../../core/notifications/notification-ports.js'
import { encodeJson } from '../codec.js'
import type { Database } from '../database.js'
import { toCommandRecord } from './commands.js'
import type { CommandRow } from './commands.js'
import { toNotificationRecord } from './notifications.js'
import type { NotificationRow } from './notifications.js'

/** `count` stamps from the clock: base+1 .. base+count, none before `now`. */
function clockStep (count: number, now: number): RawBuilder<unknown> {
  return sql`update message_clock set last_ts = greatest(last_ts + ${count}::bigint, ${now}::bigint + ${count - 1}::bigint)
    where id = 1 returning last_ts - ${count}::bigint as base`
}

function notifyColumn (ring: StoreRing | undefined, kind: string, nameColumn: string, record: RawBuilder<unknown>): RawBuilder<unknown> {
  if (ring === undefined) return sql``
  // The event of postgres-doorbell.ts, with the record as written when it fits the payload
  // (NOTIFY refuses 8,000 bytes), so that listeners need not read the row again.
  const head = sql`${kind}::text, w.id, w.device_id, w.network_id, w.device_type_id, ${sql.ref(`w.${nameColumn}`)}`
  return sql`, pg_notify(${ring.channel}, case when octet_length(${record}::text) <= 7000
    then json_build_array(${head}, ${record}) else json_build_array(${head}) end::text) as rung`
}

/** A notification row as the core's NotificationRecord, in JSON (the doorbell's `record`). */
const NOTIFICATION_RECORD = sql`json_build_object('id', w.id, 'notification', w.notification, 'deviceId', w.device_id,
  'networkId', w.network_id, 'deviceTypeId', w.device_type_id, 'timestamp', w.timestamp,
  'parameters', w.parameters::json, 'stamp', coalesce(w.clock_ts, w.timestamp))`

/** A command row as the core's CommandRecord, in JSON (the doorbell's `record`). */
const COMMAND_RECORD = sql`json_build_object('id', w.id, 'command', w.command, 'deviceId', w.device_id,
  'networkId', w.network_id, 'deviceTypeId', w.device_type_id, 'userId', w.user_id, 'parameters', w.parameters::json,
  'lifetime', w.lifetime, 'status', w.status, 'result', w.result::json, 'timestamp', w.timestamp,
  'lastUpdated', w.last_updated, 'isUpdated', w.is_updated = 1, 'stamp', coalesce(w.clock_ts, w.timestamp))`

/**
 * @example
 * const rows = await pgInsertNotifications(db, [input], Date.now(), { channel: 'devicehub_events' })
 */
export async function pgInsertNotifications (db: Kysely<Database>, list: readonly NewNotification[], now: number, ring?: StoreRing): Promise<NotificationRecord[]> {
  if (list.length === 0) return []
  const result = await sql<NotificationRow>`with input as (
      select * from unnest(${list.map((n) => n.notification)}::text[], ${list.map((n) => n.deviceId)}::text[],
        ${list.map((n) => n.networkId)}::bigint[], ${list.map((n) => n.deviceTypeId)}::bigint[],
        ${list.map((n) => encodeJson(n.parameters))}::text[], ${list.map((n) => n.timestamp ?? null)}::bigint[])
        with ordinality as i(notification, device_id, network_id, device_type_id, parameters, client_ts, ord)
    ), clock as (${clockStep(list.length, now)}),
    w as (
      insert into notifications (notification, device_id, network_id, device_type_id, parameters, timestamp, clock_ts, stored_at, device_key)
      select i.notification, i.device_id, i.network_id, i.device_type_id, i.parameters,
        coalesce(i.client_ts, c.base + i.ord), c.base + i.ord, ${now}::bigint,
        (select d.id from devices d where d.device_id = i.device_id)
      from input i cross join clock c order by i.ord
      returning *
    )
    select w.*${notifyColumn(ring, 'notification', 'notification', NOTIFICATION_RECORD)} from w order by w.id`.execute(db)
  return result.rows.map(toNotificationRecord)
}

/**
 * @example
 * const [row] = await pgInsertCommands(db, [command], Date.now(), ring)
 */
export async function pgInsertCommands (db: Kysely<Database>, list: readonly NewCommand[], now: number, ring?: StoreRing): Promise<CommandRecord[]> {
  if (list.length === 0) return []
  const result = await sql<CommandRow>`with input as (
      select * from unnest(${list.map((c) => c.command)}::text[], ${list.map((c) => c.deviceId)}::text[],
        ${list.map((c) => c.networkId)}::bigint[], ${list.map((c) => c.deviceTypeId)}::bigint[], ${list.map((c) => c.userId)}::bigint[],
        ${list.map((c) => encodeJson(c.parameters))}::text[], ${list.map((c) => c.lifetime)}::integer[],
        ${list.map((c) => c.status)}::text[], ${list.map((c) => encodeJson(c.result))}::text[], ${list.map((c) => c.timestamp ?? null)}::bigint[])
        with ordinality as i(command, device_id, network_id, device_type_id, user_id, parameters, lifetime, status, result, client_ts, ord)
    ), clock as (${clockStep(list.length, now)}),
    w as (
      insert into commands (command, device_id, network_id, device_type_id, user_id, parameters, lifetime, status, result,
        timestamp, last_updated, is_updated, clock_ts, stored_at, device_key)
      select i.command, i.device_id, i.network_id, i.device_type_id, i.user_id, i.parameters, i.lifetime, i.status, i.result,
        coalesce(i.client_ts, c.base + i.ord), coalesce(i.client_ts, c.base + i.ord), 0, c.base + i.ord, ${now}::bigint,
        (select d.id from devices d where d.device_id = i.device_id)
      from input i cross join clock c order by i.ord
      returning *
    )
    select w.*${notifyColumn(ring, 'command', 'command', COMMAND_RECORD)} from w order by w.id`.execute(db)
  return result.rows.map(toCommandRecord)
}

export interface CommandUpdate {
  deviceId: string
  id: number
  patch: CommandPatch
}

/**
 * Applies several updates (distinct ids) in one statement; `undefined` where the command does
 * not exist for that device.
 *
 * @example
 * const [row] = await pgUpdateCommands(db, [{ deviceId, id, patch: { status: 'Done' } }], Date.now(), ring)
 */
export async function pgUpdateCommands (db: Kysely<Database>, list: readonly CommandUpdate[], now: number, ring?: StoreRing): Promise<Array<CommandRecord | undefined>> {
  if (list.length === 0) return []
  const result = await sql<CommandRow & { ord: number }>`with input as (
      select * from unnest(${list.map((u) => u.deviceId)}::text[], ${list.map((u) => u.id)}::bigint[],
        ${list.map((u) => u.patch.status ?? null)}::text[], ${list.map((u) => u.patch.status !== undefined)}::boolean[],
        ${list.map((u) => u.patch.result === undefined ? null : encodeJson(u.patch.result))}::text[], ${list.map((u) => u.patch.result !== undefined)}::boolean[])
        with ordinality as u(device_id, id, status, set_status, result, set_result, ord)
    ), clock as (${clockStep(list.length, now)}),
    w as (
      update commands as c set
        status = case when u.set_status then u.status else c.status end,
        result = case when u.set_result then u.result else c.result end,
        last_updated = k.base + u.ord, is_updated = 1, stored_at = ${now}::bigint
      from input u cross join clock k
      where c.id = u.id and c.device_id = u.device_id
        and c.device_key = (select d.id from devices d where d.device_id = u.device_id)
      returning c.*, u.ord
    )
    select w.*${notifyColumn(ring, 'command-update', 'command', COMMAND_RECORD)} from w order by w.id`.execute(db)
  const byOrd = new Map(result.rows.map((row) => [Number(row.ord), toCommandRecord(row)]))
  return list.map((_, i) => byOrd.get(i + 1))
}
