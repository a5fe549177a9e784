import t from 'tap'
import { formatTimestamp, parseTimestamp } from '../../lib/core/time.js'

const MS = Date.UTC(2018, 4, 25, 9, 52, 54, 123)

t.test('formats UTC with three fraction digits and no zone', async (t) => {
  t.equal(formatTimestamp(MS), '2018-05-25T09:52:54.123')
  t.equal(formatTimestamp(0), '1970-01-01T00:00:00.000')
})

t.test('spells every instant as Date does: leap days, century rules, the year 9999 and beyond', async (t) => {
  const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 23)
  const edges = [
    1, 999, 86_399_999, 86_400_000, Date.UTC(2000, 1, 29), Date.UTC(2100, 1, 28, 23, 59, 59, 999), Date.UTC(2100, 2, 1),
    Date.UTC(2400, 1, 29, 12), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10_000, 0, 1), -1, -86_400_001
  ]
  for (const ms of edges) t.equal(formatTimestamp(ms), iso(ms), String(ms))
  t.equal(formatTimestamp(1.9), '1970-01-01T00:00:00.001', 'a fraction of a millisecond is cut, as Date cuts it')
  let mismatches = 0
  // Every day of 1970-2099 at a varying time of day, then random instants up to the year 9999.
  for (let day = 0; day < 47_482; day++) {
    const ms = day * 86_400_000 + ((day * 7_919_321) % 86_400_000)
    if (formatTimestamp(ms) !== iso(ms)) mismatches++
  }
  for (let i = 0; i < 20_000; i++) {
    const ms = Math.floor(Math.random() * Date.UTC(10_000, 0, 1))
    if (formatTimestamp(ms) !== iso(ms)) mismatches++
  }
  t.equal(mismatches, 0)
})

t.test('parses every input form of spec §1.4', async (t) => {
  const cases: Array<[unknown, number | null | undefined]> = [
    ['2018-05-25T09:52:54.123', MS],
    ['2018-05-25T09:52:54.123Z', MS],
    ['2018-05-25T11:52:54.123+02:00', MS],
    ['2018-05-25T11:52:54.123+0200', MS],
    ['2018-05-25T11:52:54.123+02', MS],
    ['2018-05-25T04:52:54.123-05:00', MS],
    ['2018-05-25T09:52:54', MS - 123],
    ['2018-05-25T09:52:54.1', MS - 23],
    ['2018-05-25T09:52:54.123456789', MS],
    ['2018-05-25T09:52', MS - 54_123],
    ['2018-05-25', Date.UTC(2018, 4, 25)],
    ['Fri, 25 May 2018 09:52:54 GMT', MS - 123],
    ['1527241974123', 1527241974123],
    [1527241974123, 1527241974123],
    ['', undefined],
    ['  ', undefined],
    [undefined, undefined],
    [null, undefined],
    ['yesterday', null],
    ['2018-13-01T00:00:00', null],
    ['2018-02-30', null],
    ['2018-05-25T25:00:00', null],
    [1.5, null],
    [true, null],
    [{}, null],
    ['99999999999999999999', null]
  ]
  for (const [input, expected] of cases) t.equal(parseTimestamp(input), expected, JSON.stringify(input))
})

t.test('format and parse round-trip', async (t) => {
  for (const ms of [0, MS, Date.UTC(2218, 0, 1)]) t.equal(parseTimestamp(formatTimestamp(ms)), ms)
})
