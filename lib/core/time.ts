/**
 * The timestamp codec. Storage keeps epoch milliseconds; the wire uses DeviceHive's
 * `yyyy-MM-ddTHH:mm:ss.SSS` in UTC with no zone designator.
 */

/** Source of "now" in epoch milliseconds; injectable so tests can move time. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/**
 * Formats epoch milliseconds the DeviceHive way.
 *
 * @example
 * formatTimestamp(1527241974123) // '2018-05-25T09:52:54.123'
 */
export function formatTimestamp (ms: number): string {
  // Any stored value is readable (issue #16): out-of-range or non-finite values are clamped to
  // what a Date can hold instead of throwing.
  const safe = Number.isFinite(ms) ? Math.max(-MAX_DATE_MS, Math.min(MAX_DATE_MS, ms)) : (ms > 0 ? MAX_DATE_MS : -MAX_DATE_MS)
  // Every view carries timestamps: the years 1970-9999 are spelled by arithmetic, without a
  // Date and its ISO string (a fifth of the time); others as Date spells them.
  if (safe >= 0 && safe < YEAR_10000_MS) return formatModern(Math.floor(safe))
  return new Date(safe).toISOString().slice(0, 23)
}

const MAX_DATE_MS = 8_640_000_000_000_000
const YEAR_10000_MS = 253_402_300_800_000
const DAY_MS = 86_400_000
const TWO_DIGITS: readonly string[] = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'))

/** `yyyy-MM-ddTHH:mm:ss.SSS` of a whole `ms` in 0 .. 9999-12-31T23:59:59.999 (Hinnant's civil-from-days). */
function formatModern (ms: number): string {
  const days = Math.floor(ms / DAY_MS)
  const inDay = ms - days * DAY_MS
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  const millis = inDay % 1000
  const seconds = Math.floor(inDay / 1000)
  return `${year}-${TWO_DIGITS[month]!}-${TWO_DIGITS[day]!}T${TWO_DIGITS[Math.floor(seconds / 3600)]!}:` +
    `${TWO_DIGITS[Math.floor(seconds / 60) % 60]!}:${TWO_DIGITS[seconds % 60]!}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}`
}

export function formatNullableTimestamp (ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : formatTimestamp(ms)
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const RFC1123 = /^(?:[A-Za-z]{3},\s*)?(\d{1,2})\s+([A-Za-z]{3})\s+(\d{4})\s+(\d{2}):(\d{2})(?::(\d{2}))?\s+(GMT|UTC|Z|[+-]\d{4})$/

/**
 * Parses every input form of the contract (spec §1.4): ISO-8601 with or without zone (none
 * means UTC), 0-9 fraction digits (truncated to ms), no seconds, a bare date (midnight UTC),
 * RFC 1123, and an all-digit string or a number of epoch milliseconds.
 *
 * @returns epoch ms, `undefined` for an empty value ("not given"), or `null` when unparseable.
 * @example
 * parseTimestamp('2018-05-25T09:52:54.123+02:00') // 1527234774123
 */
export function parseTimestamp (input: unknown): number | null | undefined {
  if (input === undefined || input === null) return undefined
  if (typeof input === 'number') return Number.isSafeInteger(input) ? input : null
  if (typeof input !== 'string') return null
  const text = input.trim()
  if (text === '') return undefined
  if (/^\d+$/.test(text)) {
    const ms = Number(text)
    return Number.isSafeInteger(ms) ? ms : null
  }
  const iso = ISO.exec(text)
  if (iso !== null) {
    const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = iso
    const ms = Number((frac + '000').slice(0, 3))
    const base = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms)
    if (!validParts(base, Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s))) return null
    return base - zoneOffsetMs(zone)
  }
  const rfc = RFC1123.exec(text)
  if (rfc !== null) {
    const [, d, monName, y, h, mi, s = '0', zone] = rfc
    const mo = MONTHS.indexOf((monName ?? '').toLowerCase()) + 1
    if (mo === 0) return null
    const base = Date.UTC(Number(y), mo - 1, Number(d), Number(h), Number(mi), Number(s))
    if (!validParts(base, Number(y), mo, Number(d), Number(h), Number(mi), Number(s))) return null
    return base - zoneOffsetMs(zone === 'GMT' || zone === 'UTC' ? 'Z' : zone)
  }
  return null
}

function validParts (ms: number, y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  if (!Number.isFinite(ms) || h > 23 || mi > 59 || s > 59) return false
  const date = new Date(ms)
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d
}

function zoneOffsetMs (zone: string | undefined): number {
  if (zone === undefined || zone === 'Z' || zone === 'z') return 0
  const sign = zone.startsWith('-') ? -1 : 1
  const digits = zone.slice(1).replace(':', '')
  const hours = Number(digits.slice(0, 2))
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0
  return sign * (hours * 60 + minutes) * 60_000
}
