/**
 * Durations on the command line: `90` (seconds), `500ms`, `30s`, `30m`, `12h`, `182d`.
 *
 * @example
 * parseDuration('30m') // 1_800_000
 */
export function parseDuration (text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text)
  if (match === null) throw new Error(`Not a duration: '${text}' (use e.g. 30m, 12h, 182d)`)
  const value = Number(match[1])
  const unit = (match[2] ?? 's').toLowerCase()
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as 'ms' | 's' | 'm' | 'h' | 'd']
  const ms = Math.round(value * factor)
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new Error(`Duration out of range: '${text}'`)
  return ms
}
