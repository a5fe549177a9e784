/**
 * The message clock of migration 0002 and the filters shared by the command and notification
 * repositories. Portable SQL only (a CASE instead of SQLite's max() / PostgreSQL's greatest()).
 */
import type { Kysely, RawBuilder, SqlBool } from 'kysely'
import { sql } from 'kysely'
import type { MessageSelector } from '../../core/realtime/message-filter.js'
import { SYSTEM_NOTIFICATIONS } from '../../core/realtime/message-filter.js'
import { CLIENT_TIMESTAMP_WINDOW_MS } from '../../core/realtime/client-timestamp.js'
import type { Database } from '../database.js'
import type { QueryTemplates, SlotOf, TemplateCall, TemplateSteps } from '../query-templates.js'

export interface MessageClockTable {
  id: number
  last_ts: number
}

/** The store's tables plus what migrations 0002 and 0004 add (kept here: only messaging uses it). */
export type MessagingDatabase = Omit<Database, 'commands' | 'notifications'> & {
  commands: Database['commands'] & { stored_at: number | null, clock_ts: number | null }
  notifications: Database['notifications'] & { stored_at: number | null, clock_ts: number | null }
  message_clock: MessageClockTable
}

/** The same database with the messaging columns in its types. */
export function messaging (db: Kysely<Database>): Kysely<MessagingDatabase> {
  return db as unknown as Kysely<MessagingDatabase>
}

/**
 * The clock step as a template statement: advances the clock to
 * `max(last_ts + count, now + count - 1)` and returns the new value (read it with
 * {@link stampOf}), so the `count` stamps it hands out (value-count+1 .. value) are all after the
 * last one and none is before `now`. The first statement of its write transaction, so that the
 * row lock orders concurrent writers (commit order = id order = timestamp order).
 *
 * @example
 * const stamp = stampOf(yield clockStep(db, Date.now()))
 */
export function clockStep (db: Kysely<Database>, now: number, count = 1): TemplateCall {
  return {
    key: 'clock-step',
    build: (slot) => messaging(db).updateTable('message_clock')
      .set({ last_ts: sql<number>`case when last_ts + ${slot(0)} > ${slot(1)} then last_ts + ${slot(0)} else ${slot(1)} end` })
      .where('id', '=', 1)
      .returning('last_ts'),
    values: [count, now + count - 1]
  }
}

/** The clock's new value from the rows of {@link clockStep}. */
export function stampOf (rows: unknown[]): number {
  const row = rows[0] as { last_ts: number } | undefined
  if (row === undefined) throw new Error('the message clock row is missing')
  return Number(row.last_ts)
}

/**
 * Runs a write's statements (a {@link clockStep} first) as one transaction on `db`: joined when
 * `db` is a transaction, at once where the dialect can (QueryTemplates.transact).
 */
export function writeSteps<T> (db: Kysely<Database>, templates: QueryTemplates, steps: () => TemplateSteps<T>): Promise<T> {
  return templates.transact(db, steps, (body) => inTransaction(db, body))
}

/** Runs `fn` in a transaction unless `db` already is one. */
export async function inTransaction<T> (db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db)
  return db.transaction().execute(fn)
}

/**
 * The scope, device and name conditions of a {@link MessageSelector} for either message
 * table. Without `names`, polls leave out the system notifications (R3); queries list them.
 *
 * @example
 * db.selectFrom('notifications').selectAll().where(selectorWhere(selector, 'notification'))
 */
export function selectorWhere (
  selector: MessageSelector, nameColumn: 'command' | 'notification', options: { excludeSystem: boolean } = { excludeSystem: true }
): RawBuilder<SqlBool> {
  const conditions: Array<RawBuilder<unknown>> = []
  const inList = (column: string, values: ReadonlyArray<string | number>, empty: string | number): RawBuilder<unknown> =>
    sql`${sql.ref(column)} in (${sql.join(values.length === 0 ? [empty] : [...values])})`
  const { scope } = selector
  if (selector.deviceIds !== undefined) {
    conditions.push(inList('device_id', selector.deviceIds, ''))
    // Only the history of the devices that have these ids now, never of deleted namesakes (#16).
    conditions.push(sql`device_key in (select d.id from devices d where ${inList('d.device_id', selector.deviceIds, '')})`)
  }
  if (scope.networkIds !== 'all') conditions.push(inList('network_id', scope.networkIds, -1))
  if (scope.deviceTypeIds !== 'all') conditions.push(inList('device_type_id', scope.deviceTypeIds, -1))
  if (selector.names !== undefined) conditions.push(inList(nameColumn, selector.names, ''))
  else if (nameColumn === 'notification' && options.excludeSystem) {
    conditions.push(sql`${sql.ref(nameColumn)} not in (${sql.join([...SYSTEM_NOTIFICATIONS])})`)
  }
  if (conditions.length === 0) return sql<SqlBool>`1 = 1`
  return sql<SqlBool>`${sql.join(conditions, sql` and `)}`
}

/**
 * The current device's key for `device_id`, a value or a column (`sql.ref`; null when no such
 * device: matches nothing). A row's `device_key = currentDeviceKey(id)` says it is that device's: a key is never reused and a
 * device's id never changes, so a lookup by message id needs no `device_id` condition beside it,
 * and has none: with one, PostgreSQL's generic plan of a template made on a new table chose the
 * device's index filtered by id, a scan of the device's whole history per lookup (issue #26).
 */
export function currentDeviceKey (deviceId: string | RawBuilder<unknown>): RawBuilder<number | null> {
  return sql<number | null>`(select d.id from devices d where d.device_id = ${deviceId})`
}

/**
 * Deletes up to `batch` rows of a deleted device's history (`device_key` = its key, or rows
 * without a key: written for a device gone before migration 0003). Never touches a row of a
 * live device with the same id: those carry that device's own, never-reused key.
 */
export async function purgeDeviceHistory (
  db: Kysely<Database>, table: 'commands' | 'notifications', deviceId: string, deviceKey: number | null, batch: number
): Promise<number> {
  const ids = await db.selectFrom(table).select('id')
    .where('device_id', '=', deviceId)
    .where((eb) => deviceKey === null ? eb('device_key', 'is', null) : eb.or([
      eb('device_key', '=', deviceKey), eb('device_key', 'is', null)
    ]))
    // No order: every row goes, and `order by id` made SQLite sort all the device's rows for
    // each batch (a temporary B-tree: 120 ms per batch for a device of a million rows), on the event loop.
    .limit(batch).execute()
  if (ids.length === 0) return 0
  const result = await db.deleteFrom(table).where('id', 'in', ids.map((r) => Number(r.id))).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/**
 * Deletes up to `batch` rows last written before `before`, by their last stamp (migration 0018:
 * no write maintains a `stored_at` index): `clock_ts` of a notification, `last_updated` of a
 * command. A stamp is at most {@link CLIENT_TIMESTAMP_WINDOW_MS} before its write, so a row
 * stamped that much before `before` was written before it. Rows written before 0018 keep their
 * `stored_at` and go by it, through the partial index that holds only them. Unordered, so each
 * condition is looked up in its index (SQLite's multi-index OR): ordered by `id`, SQLite walked
 * the table in id order instead, and the last batch of every pass, which finds fewer rows than it
 * may take, read all of it (55 ms per million rows, on the event loop, every pass and table).
 */
export async function pruneMessages (
  db: Kysely<Database>, table: 'commands' | 'notifications', before: number, batch: number
): Promise<number> {
  const m = messaging(db)
  const stamp = table === 'commands' ? 'last_updated' : 'clock_ts'
  const ids = await m.selectFrom(table).select('id')
    .where((eb) => eb.or([
      eb('stored_at', '<', before),
      eb.and([eb('stored_at', 'is', null), eb(stamp, '<', before - CLIENT_TIMESTAMP_WINDOW_MS)])
    ]))
    .limit(batch).execute()
  if (ids.length === 0) return 0
  const result = await m.deleteFrom(table).where('id', 'in', ids.map((r) => Number(r.id))).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Longest list of each kind a selector may hold to be read through a template (`selectorShape`). */
const TEMPLATE_LIST_MAX = 4

/** A selector's condition as a template part: `key` names its shape, `values` fill its slots. */
export interface SelectorShape {
  key: string
  values: unknown[]
  /** The condition, with the selector's values at slots 0 .. `values.length - 1`. */
  where(slot: SlotOf): RawBuilder<SqlBool>
}

/**
 * {@link selectorWhere} as a part of a query template (query-templates.ts): one template per
 * shape (which lists the selector has, and how long), its values passed per call, so a stream's
 * backlog read is not built and compiled again for every poll. Undefined for a selector with a
 * list longer than a few values: those are built each time, so the templates (and the prepared
 * statements of a PostgreSQL connection) stay few.
 *
 * @example
 * const shape = selectorShape(selector, 'command')
 * if (shape !== undefined) await templates.run(db, `feed:${shape.key}`, (slot) => query.where(shape.where(slot)), shape.values)
 */
export function selectorShape (selector: MessageSelector, nameColumn: 'command' | 'notification'): SelectorShape | undefined {
  const { scope } = selector
  const lists: Array<readonly unknown[] | undefined> = [
    selector.deviceIds,
    scope.networkIds === 'all' ? undefined : scope.networkIds,
    scope.deviceTypeIds === 'all' ? undefined : scope.deviceTypeIds,
    selector.names
  ]
  if (lists.some((list) => list !== undefined && list.length > TEMPLATE_LIST_MAX)) return undefined
  const key = lists.map((list) => list === undefined ? '-' : String(list.length)).join('.')
  const values = lists.flatMap((list) => list === undefined ? [] : [...list])
  return {
    key,
    values,
    where (slot) {
      let next = 0
      // The same selector with a marker in each value's place, in the order of `values`.
      const marked = (list: readonly unknown[] | undefined): never[] | undefined => list?.map(() => slot(next++))
      const deviceIds = marked(lists[0])
      const networkIds = marked(lists[1])
      const deviceTypeIds = marked(lists[2])
      const names = marked(lists[3])
      return selectorWhere({
        deviceIds,
        names,
        scope: { networkIds: networkIds ?? 'all', deviceTypeIds: deviceTypeIds ?? 'all' }
      } as MessageSelector, nameColumn)
    }
  }
}
