/**
 * Command and notification writes on PostgreSQL as ONE statement each, for a whole batch: the
 * stamp draw, the INSERT/UPDATE and (with a ring) the `pg_notify` of every row's bus
 * event. Sent outside a transaction it commits by itself: one round trip, and no lock is held
 * until commit (migration 0006). Input travels as arrays (`unnest ... with ordinality`), so
 * the statement text is the same for every batch of more than three rows (smaller ones have a
 * text per row count, of values: `inputRows`), and rows keep the order given (ids and stamps
 * follow it). Each runs as a prepared statement
 * (dialects/prepared-statements.ts): parsing and planning these CTEs was half their cost.
 *
 * `device_key` (migration 0003) is the current device's internal key, as in the portable
 * repositories (`currentDeviceKey`): an update only reaches a command of the device that exists now.
 *
 * An item's timestamp is its stamp: a client's timestamp only feeds the clock's reading
 * (core/realtime/client-timestamp.ts, issue #23).
 *
 * The bus payloads take the wire forms of lib/doorbells/postgres-doorbell-wire.ts: a row's event
 * (`[kind, id, deviceId, networkId, deviceTypeId, name, record, prev, stamp, nextXid]`, a JSON
 * array) or several packed in one, built in SQL from the written rows for one row and for updates
 * (`rings`), and from the input in Node for an insert of several rows (pg-insert-events.ts).
 */
import type { Compilable, Kysely, RawBuilder } from 'kysely'
import { sql } from 'kysely'
import type { CommandRecord, CommandUpdate, NewCommand, StoreRing } from '../../core/commands/command-ports.js'
import type { NewNotification, NotificationRecord } from '../../core/notifications/notification-ports.js'
import { batchClockReading } from '../../core/realtime/client-timestamp.js'
import { createWriteCombiner } from '../../core/write-combiner.js'
import { encodeJson } from '../codec.js'
import { prepared } from '../dialects/prepared-statements.js'
import type { QueryTemplates, SlotOf } from '../query-templates.js'
import type { Database } from '../database.js'
import { commandRecordOf, notificationRecordOf } from '../../core/realtime/message-records.js'
import { currentDeviceKey } from './message-clock.js'
import { toCommandRecord } from './commands.js'
import type { CommandRow } from './commands.js'
import type { MessageWrites } from './message-writes.js'
import { commandEventRow, MAX_PACK, MAX_RECORD, notificationEventRow, packedEvents, packEventRows, packValues } from './pg-insert-events.js'

type DrawKind = 'notification' | 'command' | 'update'

/** One input column: its name and its PostgreSQL type. */
type InputColumn = readonly [name: string, type: string]

/** Values every write statement takes first, before its input rows: slots 0 and 1. */
const READING = 0
const COUNT = 1
const FIRST_INPUT = 2

/** Batches up to this many rows travel as values, larger ones as arrays (see `inputRows`). */
const VALUES_UP_TO = 3

/**
 * A write's input rows, named `alias(names..., ord)`: for a batch, `unnest` of one array per
 * column `with ordinality`; for up to `VALUES_UP_TO` rows, the values themselves (a text per row
 * count). PostgreSQL plans the array form anew for every small execution: its custom plan sees
 * how few elements there are where the generic plan assumes ten, so it never settles on the
 * generic one, and planning was a third of a one-row write's database CPU and 40% of a two-row
 * one's. With values the generic plan is as good as a custom one, and it is kept. The array form
 * ends in `limit` the row count (slot `COUNT`): a limit by a parameter is estimated at a tenth of
 * its input, one row, so the generic plan costs no more than a custom one at any count and is
 * kept (4-row inserts were planned anew at every execution: 0.52-0.58 ms each, 0.35-0.42 with
 * the limit), and the plan chosen is the one for few rows, lookups by index (`pgUpdateCommands`).
 * The values are the template's slots from `first` on, in the order of `inputValues`.
 *
 * @example
 * sql`with input as (${inputRows('i', [['name', 'text']], 2, slot, 0)}) select * from input`
 */
function inputRows (alias: string, columns: readonly InputColumn[], count: number, slot: SlotOf, first: number): RawBuilder<unknown> {
  const as = sql.raw(`${alias}(${[...columns.map(([name]) => name), 'ord'].join(', ')})`)
  if (count <= VALUES_UP_TO) {
    // Column c of row r is slot first + c * count + r (inputValues lists the columns one after another).
    const cell = (type: string, c: number, row: number): RawBuilder<unknown> => sql`${slot(first + c * count + row)}::${sql.raw(type)}`
    const rows = Array.from({ length: count }, (_, row) =>
      sql`(${sql.join(columns.map(([, type], c) => cell(type, c, row)))}, ${sql.raw(String(row + 1))}::bigint)`)
    return sql`select * from (values ${sql.join(rows)}) as ${as}`
  }
  const arrays = columns.map(([, type], c) => sql`${slot(first + c)}::${sql.raw(type)}[]`)
  return sql`select * from unnest(${sql.join(arrays)}) with ordinality as ${as} limit ${slot(COUNT)}::bigint`
}

/** The values `inputRows` reads, one list per column: each value in the values form, each list in the array form. */
function inputValues (columns: ReadonlyArray<readonly unknown[]>): unknown[] {
  const count = columns[0]!.length
  return count <= VALUES_UP_TO ? columns.flat() : [...columns]
}

/** The template key of a write: its statement, its input's form and its ring's channel. */
function shapeKey (statement: string, count: number, ring: StoreRing | undefined): string {
  return `${statement}:${count <= VALUES_UP_TO ? count : 'n'}:${ring?.channel ?? ''}`
}

/**
 * `count` stamps (and ids, for inserts) from `devicehub_draw()` (migration 0006): prev, first_stamp,
 * first_id, next_xid. With a ring the write is not ordered by any lock held until commit: the
 * bus events carry the draw chain and the ordered bus (store/ordering/ordered-bus.ts) puts them
 * back in stamp order. Without a ring (a bus that does not ride the statement: one instance) the
 * draw takes the clock row's lock first, so those writes commit in stamp order.
 */
function draw (kind: DrawKind, count: unknown, now: unknown, ring: StoreRing | undefined): RawBuilder<unknown> {
  return sql`select * from devicehub_draw(${kind}::text, (${count})::integer, ${now}::bigint, ${ring === undefined}::boolean)`
}

/**
 * The bus events of the written rows `w` (doorbells/postgres-doorbell-wire.ts), each in the ten-element form
 * with its draw chain (the stamp drawn just before it: its own less one in the statement, the
 * draw's `prev` for the first; its own stamp) and its record as written when that fits. The
 * events of a statement of several rows travel packed (decodeDoorbellEvents), as many to a
 * `pg_notify` as fit one payload at the size of the largest: the listening backend of every
 * instance then handles one notification per statement instead of one per row (half its work).
 * A pack of one row is that row's event, as in earlier versions. Adds the CTEs `e`, `g`, `rung`;
 * the final select runs them (`ringing`).
 */
function rings (
  ring: StoreRing | undefined,
  kind: string,
  nameColumn: string,
  record: RawBuilder<unknown>,
  stamp: string
): RawBuilder<unknown> {
  if (ring === undefined) return sql``
  const at = sql.ref(`w.${stamp}`)
  // A statement's stamps are the draw's, consecutive from `first_stamp`: each row's place and the
  // stamp before it follow from its own (a window sorting the rows for them cost 6% of a 16-row
  // statement's database CPU). An update that loses a row to a concurrent delete leaves its stamp
  // unused, as a failed write does: the ordered bus settles the gap (ordered-bus.ts).
  // Materialized, and the record fenced with `offset 0`: inlined, each expression would be
  // evaluated once per reference (the record twice per row).
  return sql`, e as materialized (
      select r.stamp, r.id, r.seq, ${eventText(kind, 'r', sql`r.full`, sql`r.prev`, sql`r.stamp`)} as ev
      from (
        select ${at} as stamp, ${at} - d.first_stamp + 1 as seq, case when ${at} = d.first_stamp then d.prev else ${at} - 1 end as prev,
          d.next_xid, w.id, w.device_id, w.network_id, w.device_type_id, ${sql.ref(`w.${nameColumn}`)} as name, (${record})::text as full
        from w cross join d offset 0
      ) as r
    )${packs(ring, kind)}`
}

/**
 * A row's event in the ten-element form, as text: concatenated, because json_build_array looks up
 * each argument's type for every row. `from` names the relation with the row's columns
 * (`id`, `device_id`, `network_id`, `device_type_id`, `name`, `next_xid`); `record` is JSON text.
 */
function eventText (
  kind: string, from: string, record: RawBuilder<unknown>, prev: RawBuilder<unknown>, stamp: RawBuilder<unknown>
): RawBuilder<unknown> {
  const column = (name: string): RawBuilder<unknown> => sql.ref(`${from}.${name}`)
  const text = (name: string): RawBuilder<unknown> => sql`to_json(${column(name)}::text)::text`
  const nullable = (name: string): RawBuilder<unknown> => sql`coalesce(${column(name)}::text, 'null')`
  return sql`('[' || ${sql.lit(JSON.stringify(kind))} || ', ' || ${column('id')}::text || ', ' || ${text('device_id')} || ', ' ||
    ${nullable('network_id')} || ', ' || ${nullable('device_type_id')} || ', ' || ${text('name')} || ', ' ||
    coalesce(case when octet_length(${record}) <= ${sql.lit(MAX_RECORD)} then ${record} end, 'null') || ', ' || (${prev})::text ||
    ', ' || (${stamp})::text || ', ' || ${column('next_xid')}::text || ']')`
}

/**
 * The CTEs `g` and `rung` of `rings` for several rows: as many events to a `pg_notify` as fit one
 * payload at the size of the largest.
 */
function packs (ring: StoreRing, kind: string): RawBuilder<unknown> {
  return sql`, g as (
      -- string_agg joins with ', ': each event's bytes plus two.
      select count(*) as n, max(e.id) as id, max(e.stamp) as last, string_agg(e.ev, ', ' order by e.stamp) as events
      from e cross join (select ${sql.lit(MAX_PACK)} / max(octet_length(e.ev) + 2) as fit from e) as f
      group by (e.seq - 1) / greatest(f.fit, 1)
    ), rung as (
      select pg_notify(${ring.channel}, case when g.n = 1 then g.events
        else concat('[', to_json(${kind}::text), ', ', g.id, ', "", null, null, "", [', g.events, '], ', g.last - 1, ', ', g.last, ', ',
          d.next_xid, ']') end)
      from g cross join d
    )`
}

/**
 * What a write statement answers: `rows`, those columns for each written row, in id order (an
 * update: which commands it found); or `batch`, one row for the whole statement (an insert, whose
 * ids and stamps are the draw's first ones counted up in input order: `d.first_id + i.ord - 1`).
 */
type Answer = { rows: RawBuilder<unknown> } | { batch: RawBuilder<unknown> }

/**
 * The rest of a write statement after `w`: its `answer`, and with a ring its rows' bus events
 * (`rings`) and the draw's `prev` and `next_xid` (`DRAWN`). A statement of one row (most of
 * them when writes are few) rings from its final select, without the CTEs packs need: they cost
 * more than they save on one row. `w` runs to its end whether or not the final select reads it.
 */
function ringing (
  ring: StoreRing | undefined, single: boolean, kind: string, nameColumn: string, record: RawBuilder<unknown>, stamp: string,
  answer: Answer
): RawBuilder<unknown> {
  const returned = 'rows' in answer ? answer.rows : answer.batch
  const from = 'rows' in answer ? sql`from w cross join d order by w.id` : sql`from d`
  if (ring === undefined) return sql`\n    select ${returned} ${from}`
  // The count runs `rung` once (an init plan).
  if (!single) {
    const rung = sql`(select count(*) from rung) as rung`
    return sql`${rings(ring, kind, nameColumn, record, stamp)}\n    select ${returned}, ${DRAWN}, ${rung} ${from}`
  }
  // `offset 0` fences the record, built once.
  const event = eventText(kind, 'y', sql`y.full`, sql`y.prev`, sql`y.stamp`)
  return sql`\n    select ${returned}, ${DRAWN}, pg_notify(${ring.channel}, ${event}) as rung
    from w cross join d cross join lateral (
      select w.id, w.device_id, w.network_id, w.device_type_id, ${sql.ref(`w.${nameColumn}`)} as name, d.next_xid, d.prev,
        ${sql.ref(`w.${stamp}`)} as stamp, (${record})::text as full offset 0
    ) as y order by w.id`
}

/**
 * The rest of an insert statement after `w`: its one row (`INSERTED`), and with a ring its bus
 * events: built in SQL from the row when there is one (`ringing`), else from the input in Node
 * (pg-insert-events.ts), whose packs the statement reads from the slots after its input rows
 * (`packFirst`). Only the first needs `w` to return the row (`insertReturning`).
 */
function insertRinging (
  ring: StoreRing | undefined, count: number, kind: 'notification' | 'command', record: RawBuilder<unknown>, slot: SlotOf,
  packFirst: number
): RawBuilder<unknown> {
  if (!packedInNode(ring, count)) return ringing(ring, true, kind, kind, record, 'clock_ts', INSERTED)
  return sql`${packedEvents(ring, kind, slot, packFirst)}
    select ${INSERTED.batch}, ${DRAWN}, (select count(*) from rung) as rung from d`
}

/** Whether an insert's events are built in Node (`insertRinging`): with a ring, for more than one row. */
const packedInNode = (ring: StoreRing | undefined, count: number): ring is StoreRing => ring !== undefined && count > 1

/** What `w` of an insert returns: every column where `insertRinging` builds the event from the row in SQL. */
const insertReturning = (ring: StoreRing | undefined, count: number): RawBuilder<unknown> =>
  ring !== undefined && !packedInNode(ring, count) ? sql`returning *` : sql``

/** The first slot after a write's input rows: `columns` values per row, or one array per column (`inputRows`). */
const afterInput = (columns: readonly InputColumn[], count: number): number =>
  FIRST_INPUT + (count <= VALUES_UP_TO ? columns.length * count : columns.length)

/** The values of an insert's packed events (`insertRinging`): none where they are built in SQL. */
const packsFor = (ring: StoreRing | undefined, count: number, rows: () => string[]): unknown[] =>
  packedInNode(ring, count) ? packValues(packEventRows(rows())) : []

/**
 * A notification row as the core's NotificationRecord, as JSON text. Concatenated rather than
 * `json_build_object`, which looks up the type and output function of each of its 16 arguments
 * for every row: that was a sixth of the statement. Only the two names need JSON escaping
 * (`to_json`); the parameters are the JSON text this statement stored (`encodeJson`).
 */
const NOTIFICATION_RECORD = sql`('{"id": ' || w.id::text || ', "notification": ' || to_json(w.notification::text)::text ||
  ', "deviceId": ' || to_json(w.device_id::text)::text || ', "networkId": ' || coalesce(w.network_id::text, 'null') ||
  ', "deviceTypeId": ' || coalesce(w.device_type_id::text, 'null') || ', "timestamp": ' || coalesce(w.clock_ts, w.timestamp)::text ||
  ', "parameters": ' || coalesce(w.parameters, 'null') || ', "stamp": ' || coalesce(w.clock_ts, w.timestamp)::text || '}')`

/** A command row as the core's CommandRecord, in JSON (the bus event's `record`). */
const COMMAND_RECORD = sql`json_build_object('id', w.id, 'command', w.command, 'deviceId', w.device_id,
  'networkId', w.network_id, 'deviceTypeId', w.device_type_id, 'userId', w.user_id, 'parameters', w.parameters::json,
  'lifetime', w.lifetime, 'status', w.status, 'result', w.result::json, 'timestamp', coalesce(w.clock_ts, w.timestamp),
  'lastUpdated', case when w.is_updated = 1 then w.last_updated else coalesce(w.clock_ts, w.timestamp) end,
  'isUpdated', w.is_updated = 1, 'stamp', coalesce(w.clock_ts, w.timestamp))`

/** Most rows per write statement (bounded statement size). */
export const PG_WRITE_BATCH = 200

/**
 * Write statements in flight at once per kind (notification inserts, command inserts, command
 * updates): no lock is held until commit, so their commits overlap and the database flushes them
 * together. Updates of one command stay one at a time (`keyOf`: a second must not overtake the first).
 */
export const PG_WRITE_LANES = 2

/**
 * A statement in flight of this many rows or more keeps the second lane shut (`crowdedAt`): under
 * load the next rows wait for it and go out together: fewer, larger statements, less CPU per row
 * in devicehub and in the database (issue #26, stop 56: (a) on PostgreSQL, bare's CPU per insert
 * over devicehub's 0.56 -> 0.60, medians of 5 alternated runs; the rate, bound by the statements'
 * latency, unchanged). The paced round trip's batches of one or two keep both lanes.
 */
export const PG_WRITE_CROWDED = 8

/** A raw statement as a template's build compiles it: by the dialect of `db`. */
function compilable<R> (db: Kysely<Database>, statement: RawBuilder<R>): Compilable<R> {
  return { compile: () => statement.compile(db) }
}

/**
 * What an insert reads back: one row, the first id and stamp it drew (row i has first + i). The
 * records are built from the input (`notificationRecordOf`, `commandRecordOf`): every column read
 * back (parsed by the driver, the JSON decoded again) cost more than the ids, and a row per
 * written row more than one row (issue #26: 16 rows, 15-20% of the statement's CPU in Node).
 */
const INSERTED: { batch: RawBuilder<unknown> } = { batch: sql`d.first_id as id, d.first_stamp as clock_ts` }

/** The row of `INSERTED`. */
interface InsertedRow extends DrawnRow { id: number | string, clock_ts: number | string }

/** The first id and stamp an insert drew (`INSERTED`). */
const firstOf = (rows: readonly InsertedRow[]): { id: number, stamp: number } =>
  ({ id: Number(rows[0]!.id), stamp: Number(rows[0]!.clock_ts) })

/** What a ringing statement adds to each row it returns: its draw's `prev` and `next_xid` (`ringing`). */
const DRAWN = sql`d.prev as draw_prev, d.next_xid as draw_xid`

/** A row of a ringing statement (`DRAWN`); the columns are absent without a ring. */
interface DrawnRow { draw_prev?: number | string, draw_xid?: number | string }

/**
 * Tells `ring` where each written record stands in the draw chain, as the statement's NOTIFYs
 * say it (`rings`): a statement's stamps are consecutive, the first follows the draw's `prev`.
 */
function tellDrawn<R extends NotificationRecord | CommandRecord> (
  ring: StoreRing | undefined, rows: readonly DrawnRow[], records: ReadonlyArray<R | undefined>, stampOf: (record: R) => number
): void {
  if (ring === undefined || rows.length === 0) return
  const prev = Number(rows[0]!.draw_prev)
  const nextXid = Number(rows[0]!.draw_xid)
  let first = Number.POSITIVE_INFINITY
  for (const record of records) if (record !== undefined) first = Math.min(first, stampOf(record))
  for (const record of records) {
    if (record === undefined) continue
    const stamp = stampOf(record)
    ring.drawn(record, { prev: stamp === first ? prev : stamp - 1, stamp, nextXid })
  }
}

const NOTIFICATION_INPUT: readonly InputColumn[] = [
  ['notification', 'text'], ['device_id', 'text'], ['network_id', 'bigint'], ['device_type_id', 'bigint'], ['parameters', 'text']
]

/**
 * Each statement's text is built and compiled once per shape (`shapeKey`) by the store's query
 * templates, not per batch (Kysely's `sql` building and compiling these CTEs showed in CPU
 * profiles, issue #26); a call only lists its values.
 *
 * @example
 * const rows = await pgInsertNotifications(db, templates, [input], Date.now(), { channel: 'devicehub_events' })
 */
export async function pgInsertNotifications (
  db: Kysely<Database>, templates: QueryTemplates, list: readonly NewNotification[], now: number, ring?: StoreRing
): Promise<NotificationRecord[]> {
  if (list.length === 0) return []
  const parameters = list.map((n) => encodeJson(n.parameters))
  const values = [batchClockReading(list, now), list.length, ...inputValues([
    list.map((n) => n.notification), list.map((n) => n.deviceId), list.map((n) => n.networkId),
    list.map((n) => n.deviceTypeId), parameters]),
  ...packsFor(ring, list.length, () => list.map((n, i) => notificationEventRow(n, parameters[i] ?? null)))]
  const key = shapeKey('notifications', list.length, ring)
  const rows = await templates.run<InsertedRow>(db, key, (slot) => compilable(db, sql<InsertedRow>`${prepared()}with input as (
      ${inputRows('i', NOTIFICATION_INPUT, list.length, slot, FIRST_INPUT)}
    ), d as (${draw('notification', slot(COUNT), slot(READING), ring)}),
    w as (
      insert into notifications (id, notification, device_id, network_id, device_type_id, parameters, timestamp, clock_ts,
        device_key)
      select d.first_id + i.ord - 1, i.notification, i.device_id, i.network_id, i.device_type_id, i.parameters,
        d.first_stamp + i.ord - 1, d.first_stamp + i.ord - 1, ${currentDeviceKey(sql.ref('i.device_id'))}
      from input i cross join d order by i.ord
      ${insertReturning(ring, list.length)}
    )${insertRinging(ring, list.length, 'notification', NOTIFICATION_RECORD, slot, afterInput(NOTIFICATION_INPUT, list.length))}`),
  values)
  const first = firstOf(rows)
  const records = list.map((n, i) => notificationRecordOf(n, first.id + i, first.stamp + i))
  tellDrawn(ring, rows, records, (record) => record.stamp)
  return records
}

const COMMAND_INPUT: readonly InputColumn[] = [
  ['command', 'text'], ['device_id', 'text'], ['network_id', 'bigint'], ['device_type_id', 'bigint'], ['user_id', 'bigint'],
  ['parameters', 'text'], ['lifetime', 'integer'], ['status', 'text'], ['result', 'text']
]

/**
 * @example
 * const [row] = await pgInsertCommands(db, templates, [command], Date.now(), ring)
 */
export async function pgInsertCommands (
  db: Kysely<Database>, templates: QueryTemplates, list: readonly NewCommand[], now: number, ring?: StoreRing
): Promise<CommandRecord[]> {
  if (list.length === 0) return []
  const parameters = list.map((c) => encodeJson(c.parameters))
  const results = list.map((c) => encodeJson(c.result))
  const values = [batchClockReading(list, now), list.length, ...inputValues([
    list.map((c) => c.command), list.map((c) => c.deviceId), list.map((c) => c.networkId), list.map((c) => c.deviceTypeId),
    list.map((c) => c.userId), parameters, list.map((c) => c.lifetime), list.map((c) => c.status), results]),
  ...packsFor(ring, list.length, () => list.map((c, i) => commandEventRow(c, parameters[i] ?? null, results[i] ?? null)))]
  const key = shapeKey('commands', list.length, ring)
  const rows = await templates.run<InsertedRow>(db, key, (slot) => compilable(db, sql<InsertedRow>`${prepared()}with input as (
      ${inputRows('i', COMMAND_INPUT, list.length, slot, FIRST_INPUT)}
    ), d as (${draw('command', slot(COUNT), slot(READING), ring)}),
    w as (
      insert into commands (id, command, device_id, network_id, device_type_id, user_id, parameters, lifetime, status, result,
        timestamp, last_updated, is_updated, clock_ts, device_key)
      select d.first_id + i.ord - 1, i.command, i.device_id, i.network_id, i.device_type_id, i.user_id, i.parameters, i.lifetime,
        i.status, i.result, d.first_stamp + i.ord - 1, d.first_stamp + i.ord - 1, 0,
        d.first_stamp + i.ord - 1, ${currentDeviceKey(sql.ref('i.device_id'))}
      from input i cross join d order by i.ord
      ${insertReturning(ring, list.length)}
    )${insertRinging(ring, list.length, 'command', COMMAND_RECORD, slot, afterInput(COMMAND_INPUT, list.length))}`), values)
  const first = firstOf(rows)
  const records = list.map((c, i) => commandRecordOf(c, first.id + i, first.stamp + i))
  tellDrawn(ring, rows, records, (record) => record.stamp)
  return records
}

const UPDATE_INPUT: readonly InputColumn[] = [
  ['device_id', 'text'], ['id', 'bigint'], ['status', 'text'], ['set_status', 'boolean'], ['result', 'text'], ['set_result', 'boolean'],
  ['parameters', 'text'], ['set_parameters', 'boolean']
]

/**
 * Applies several updates (distinct ids) in one statement; `undefined` where the command does
 * not exist for that device.
 *
 * Commands are found by primary key alone: in `m` inside a lateral fenced with `offset 0` (the
 * device is checked outside it), in `w` by `id`. The statement's generic plan is made once per
 * connection, often while `commands` is small and never analyzed (PostgreSQL then assumes ten
 * pages), and kept as the table grows. With the device's columns in the join it chose a hash
 * join over a sequential scan, or the device's index filtered on id: an update took 0.5 ms at
 * 500 rows and 20 ms (one row) to 67 ms (five) at 200,000. Now no plan but the key's lookups is
 * possible, and an update stays at 0.4-0.9 ms however large the table.
 *
 * @example
 * const [row] = await pgUpdateCommands(db, templates, [{ deviceId, id, patch: { status: 'Done' } }], Date.now(), ring)
 */
export async function pgUpdateCommands (
  db: Kysely<Database>, templates: QueryTemplates, list: readonly CommandUpdate[], now: number, ring?: StoreRing
): Promise<Array<CommandRecord | undefined>> {
  if (list.length === 0) return []
  // The update's draw counts the rows it found (`m`), and the clock is read at `now`.
  const values = [now, list.length, ...inputValues([
    list.map((u) => u.deviceId), list.map((u) => u.id),
    list.map((u) => u.patch.status ?? null), list.map((u) => u.patch.status !== undefined),
    list.map((u) => u.patch.result === undefined ? null : encodeJson(u.patch.result)), list.map((u) => u.patch.result !== undefined),
    list.map((u) => u.patch.parameters === undefined || u.patch.parameters === null ? null : encodeJson(u.patch.parameters)),
    list.map((u) => u.patch.parameters !== undefined)])]
  type Row = CommandRow & DrawnRow & { ord: number }
  const key = shapeKey('command-updates', list.length, ring)
  const rows = await templates.run<Row>(db, key, (slot) => compilable(db, sql<Row>`${prepared()}with input as (
      ${inputRows('u', UPDATE_INPUT, list.length, slot, FIRST_INPUT)}
    ),
    -- Stamps only for the commands that exist: a missing one must not leave a hole in the draw chain.
    -- Each command by its primary key alone (see the function's comment); its device key says whose it is.
    m as (
      select u.*, row_number() over (order by u.ord) as k from input u
      cross join lateral (select c.device_key from commands c where c.id = u.id offset 0) as c
      where c.device_key = ${currentDeviceKey(sql.ref('u.device_id'))}
    ), d as (${draw('update', sql`select count(*) from m`, slot(READING), ring)}),
    w as (
      update commands as c set
        status = case when m.set_status then m.status else c.status end,
        result = case when m.set_result then m.result else c.result end,
        parameters = case when m.set_parameters then m.parameters else c.parameters end,
        last_updated = d.first_stamp + m.k - 1, is_updated = 1, stored_at = null
      from m cross join d
      where c.id = m.id
      returning c.*, m.ord
    )${ringing(ring, list.length === 1, 'command-update', 'command', COMMAND_RECORD, 'last_updated', { rows: sql`w.*` })}`), values)
  const byOrd = new Map(rows.map((row) => [Number(row.ord), toCommandRecord(row)]))
  const records = list.map((_, i) => byOrd.get(i + 1))
  tellDrawn(ring, rows, records, (record) => record.lastUpdated)
  return records
}

interface Pending<T> {
  value: T
  now: number
  ring: StoreRing | undefined
}

/** One statement per ring: its channel, and each row's `drawn` (the ring of the statement's first write tells them all). */
const sameRing = <T>(batch: ReadonlyArray<Pending<T>>, item: Pending<T>): boolean => batch[0]!.ring === item.ring
const latest = <T>(batch: ReadonlyArray<Pending<T>>): number => Math.max(...batch.map((p) => p.now))

/**
 * The PostgreSQL dialect's message writes (`StoreDialect.messageWrites`): one statement each.
 * Outside a transaction concurrent writes are combined into one statement per batch (group
 * commit); inside one, each write is its own statement on the transaction's connection.
 *
 * @example
 * const writes = createPgMessageWrites(db, createQueryTemplates())
 * const row = await writes.insertNotification(input, Date.now(), { channel: 'devicehub_events' })
 */
export function createPgMessageWrites (db: Kysely<Database>, templates: QueryTemplates): MessageWrites {
  if (db.isTransaction) {
    return {
      insertNotification: async (input, now, ring) => (await pgInsertNotifications(db, templates, [input], now, ring))[0]!,
      insertNotifications: (list, now, ring) => pgInsertNotifications(db, templates, list, now, ring),
      insertCommand: async (input, now, ring) => (await pgInsertCommands(db, templates, [input], now, ring))[0]!,
      updateCommand: async (update, now, ring) => (await pgUpdateCommands(db, templates, [update], now, ring))[0]
    }
  }
  const lanes = { maxBatch: PG_WRITE_BATCH, canJoin: sameRing, concurrency: PG_WRITE_LANES, crowdedAt: PG_WRITE_CROWDED }
  const notifications = createWriteCombiner<Pending<NewNotification>, NotificationRecord>(
    (batch) => pgInsertNotifications(db, templates, batch.map((p) => p.value), latest(batch), batch[0]!.ring),
    lanes)
  const commands = createWriteCombiner<Pending<NewCommand>, CommandRecord>(
    (batch) => pgInsertCommands(db, templates, batch.map((p) => p.value), latest(batch), batch[0]!.ring),
    lanes)
  const updates = createWriteCombiner<Pending<CommandUpdate>, CommandRecord | undefined>(
    (batch) => pgUpdateCommands(db, templates, batch.map((p) => p.value), latest(batch), batch[0]!.ring),
    // One statement updates a row once: a second update of the same command waits until the first is written.
    { ...lanes, keyOf: (p) => p.value.id })
  return {
    insertNotification: (input, now, ring) => notifications.write({ value: input, now, ring }),
    insertNotifications: (list, now, ring) => pgInsertNotifications(db, templates, list, now, ring),
    insertCommand: (input, now, ring) => commands.write({ value: input, now, ring }),
    updateCommand: (update, now, ring) => updates.write({ value: update, now, ring })
  }
}
