/**
 * Durations on the command line always carry their unit: `500ms`, `30s`, `30m`, `12h`, `182d`.
 * A bare number is refused rather than guessed (seconds? minutes?).
 *
 * @example
 * parseDuration('30m') // 1_800_000
 */
export function parseDuration (text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text)
  if (match === null) throw new Error(`'${text}' is not a duration: use a number and a unit, e.g. 30s, 30m, 12h, 182d`)
  if (match[2] === undefined) {
    throw new Error(`'${text}' has no unit: write ${match[1]}s, ${match[1]}m, ${match[1]}h or ${match[1]}d (or ms)`)
  }
  const value = Number(match[1])
  const unit = match[2].toLowerCase()
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as 'ms' | 's' | 'm' | 'h' | 'd']
  const ms = Math.round(value * factor)
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new Error(`Duration out of range: '${text}'`)
  return ms
}
