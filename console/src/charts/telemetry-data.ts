/**
 * Notifications to chart data: every finite number in `parameters`, nested objects named by
 * path (`env.temperature`), of every notification but the system ones (`$device-add`, ...); one chart per path, one series per notification name carrying it,
 * aligned on the union of their times (uPlot's data layout: x in seconds, then one column per
 * series with null where that series has no value).
 */
import type { Notification } from '../api.js'
import { parseServerTime } from '../api.js'

/** Paths deeper than this are not followed (a guard against odd payloads, not a real limit). */
const MAX_DEPTH = 8

/** `[path, value]` for each finite number among the values of `parameters`; arrays are skipped. */
export function numericLeaves (parameters: Record<string, unknown> | null, prefix = '', depth = 0): Array<[string, number]> {
  if (parameters === null || depth > MAX_DEPTH) return []
  const out: Array<[string, number]> = []
  for (const [key, value] of Object.entries(parameters)) {
    const path = prefix === '' ? key : `${prefix}.${key}`
    if (typeof value === 'number' && Number.isFinite(value)) out.push([path, value])
    else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      out.push(...numericLeaves(value as Record<string, unknown>, path, depth + 1))
    }
  }
  return out
}

export interface ChartData {
  path: string
  /** Notification names, one series each, sorted. */
  names: string[]
  /** Seconds since the epoch, ascending. */
  x: number[]
  /** One column per name, aligned with `x`. */
  ys: Array<Array<number | null>>
}

/** Epoch seconds of a notification (uPlot's time scale counts seconds). */
export function secondsOf (n: Notification): number {
  return parseServerTime(n.timestamp).getTime() / 1000
}

/**
 * Charts for `items` (ascending by time) within `[from, to]` (epoch seconds), sorted by path.
 *
 * @example
 * buildCharts([{ id: 1, notification: 'env', timestamp: '2026-11-22T14:00:00.000', parameters: { t: 21 }, deviceId: 'd' }], 0, Infinity)
 * // [{ path: 't', names: ['env'], x: [1795356000], ys: [[21]] }]
 */
export function buildCharts (items: readonly Notification[], from: number, to: number): ChartData[] {
  const rows = new Map<string, Array<{ t: number, name: string, v: number }>>()
  for (const n of items) {
    // `$device-add` and the other system notifications carry ids, not measurements.
    if (n.notification.startsWith('$')) continue
    const t = secondsOf(n)
    if (t < from || t > to) continue
    for (const [path, v] of numericLeaves(n.parameters)) {
      let list = rows.get(path)
      if (list === undefined) rows.set(path, list = [])
      list.push({ t, name: n.notification, v })
    }
  }
  const charts: ChartData[] = []
  for (const [path, list] of rows) {
    const names = [...new Set(list.map((r) => r.name))].sort()
    const column = new Map(names.map((name, i) => [name, i]))
    const x: number[] = []
    const ys: Array<Array<number | null>> = names.map(() => [])
    for (const { t, name, v } of list) {
      if (x.at(-1) !== t) {
        x.push(t)
        for (const y of ys) y.push(null)
      }
      ys[column.get(name)!]![x.length - 1] = v
    }
    charts.push({ path, names, x, ys })
  }
  return charts.sort((a, b) => a.path.localeCompare(b.path))
}
