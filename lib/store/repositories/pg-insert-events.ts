/**
 * The bus events of a PostgreSQL insert of several rows, built in Node from the write's input
 * (issue #26). Building them in SQL from the written rows (record text, `string_agg`) was about a
 * fifth of the statement's database CPU; Node holds every value already but the ids and stamps,
 * which the statement draws. So Node sends each row's routing keys and fields as JSON text, in
 * chunks that fit one NOTIFY, and the statement only wraps each chunk with the draw's first id,
 * first stamp, `prev` and `next_xid`: the input-pack form that doorbells/postgres-doorbell-wire.ts
 * decodes (`decodeDoorbellEvents`), where each record is rebuilt as the writer builds its own
 * (`notificationRecordOf`, `commandRecordOf`).
 */
import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { NewCommand, StoreRing } from '../../core/commands/command-ports.js'
import type { NewNotification } from '../../core/notifications/notification-ports.js'
import type { SlotOf } from '../query-templates.js'

/** A record larger than this stays behind (a listener reads the row): NOTIFY refuses 8,000 bytes. */
export const MAX_RECORD = 7000

/** Most bytes of the events packed in one payload, leaving room for the pack's header. */
export const MAX_PACK = 7700

/** A row's text: its routing keys, then its fields when the row fits `MAX_RECORD`. */
function rowText (deviceId: string, networkId: number | null, deviceTypeId: number | null, name: string, fields: string): string {
  const head = `[${JSON.stringify(deviceId)}, ${networkId ?? 'null'}, ${deviceTypeId ?? 'null'}, ${JSON.stringify(name)}`
  const row = `${head}, ${fields}]`
  return row.length <= MAX_RECORD / 3 || Buffer.byteLength(row) <= MAX_RECORD ? row : `${head}]`
}

/**
 * A notification's row of an input pack: `[deviceId, networkId, deviceTypeId, name, parameters]`;
 * `parameters` is the JSON text the statement stores.
 *
 * @example
 * notificationEventRow({ notification: 't', deviceId: 'd', networkId: 1, deviceTypeId: 2, parameters: null }, null)
 * // '["d", 1, 2, "t", null]'
 */
export function notificationEventRow (n: NewNotification, parameters: string | null): string {
  return rowText(n.deviceId, n.networkId, n.deviceTypeId, n.notification, parameters ?? 'null')
}

/**
 * A command's row of an input pack: `[deviceId, networkId, deviceTypeId, name, [userId,
 * parameters, lifetime, status, result]]`, the JSON values as the statement stores them.
 *
 * @example
 * commandEventRow(command, encodeJson(command.parameters), encodeJson(command.result))
 */
export function commandEventRow (c: NewCommand, parameters: string | null, result: string | null): string {
  const status = c.status === null || c.status === undefined ? 'null' : JSON.stringify(c.status)
  const fields = `[${c.userId ?? 'null'}, ${parameters ?? 'null'}, ${c.lifetime ?? 'null'}, ${status}, ${result ?? 'null'}]`
  return rowText(c.deviceId, c.networkId, c.deviceTypeId, c.command, fields)
}

/** A statement's event rows in chunks of one NOTIFY each: the rows' text, and each chunk's first and last row (from 1). */
export interface EventPacks {
  rows: string[]
  starts: number[]
  lasts: number[]
}

/**
 * Splits rows, in order, into as few chunks as fit `MAX_PACK` bytes each (a row alone always
 * fits: `MAX_RECORD`), each chunk's rows joined by `, `.
 *
 * @example
 * packEventRows(['["d", 1, 2, "t", null]', '["d", 1, 2, "u", null]']) // { rows: ['["d", ...], ["d", ...]'], starts: [1], lasts: [2] }
 */
export function packEventRows (rows: readonly string[]): EventPacks {
  const packs: EventPacks = { rows: [], starts: [], lasts: [] }
  let start = 0
  let size = 0
  const close = (end: number): void => {
    packs.rows.push(rows.slice(start, end).join(', '))
    packs.starts.push(start + 1)
    packs.lasts.push(end)
  }
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    const bytes = Buffer.byteLength(row) + 2
    if (i > start && size + bytes > MAX_PACK) {
      close(i)
      start = i
      size = 0
    }
    size += bytes
  }
  close(rows.length)
  return packs
}

/**
 * The values of `packedEvents`' three slots, in order. The chunks travel as one text, a line each
 * (JSON text has no raw line breaks), not as an array: the driver escapes every quote of an
 * array's elements, and these are mostly quotes.
 */
export const packValues = (packs: EventPacks): unknown[] => [packs.rows.join('\n'), packs.starts, packs.lasts]

/**
 * The CTE `rung`: one `pg_notify` per chunk of `packEventRows`, read from the slots `first` to
 * `first + 2` (`packValues`), each chunk wrapped in the input-pack form with the draw `d`'s ids and
 * stamps: `[kind, lastId, '', null, null, '', {"first": [id, stamp, prev], "rows": [...]},
 * lastStamp - 1, lastStamp, nextXid]`. A chunk's first row follows the draw's `prev` or the
 * chunk before it.
 */
export function packedEvents (ring: StoreRing, kind: 'notification' | 'command', slot: SlotOf, first: number): RawBuilder<unknown> {
  const start = sql`d.first_stamp + p.start - 1`
  const last = sql`d.first_stamp + p.last - 1`
  return sql`, rung as (
      select pg_notify(${ring.channel}, concat(${sql.lit(`[${JSON.stringify(kind)}, `)}, d.first_id + p.last - 1,
        ', "", null, null, "", {"first": [', d.first_id + p.start - 1, ', ', ${start}, ', ',
        case when p.start = 1 then d.prev else ${start} - 1 end, '], "rows": [', p.rows, ']}, ', ${last} - 1, ', ', ${last}, ', ',
        d.next_xid, ']'))
      from unnest(string_to_array(${slot(first)}::text, e'\n'), ${slot(first + 1)}::integer[], ${slot(first + 2)}::integer[])
        as p(rows, start, last)
        cross join d
    )`
}
