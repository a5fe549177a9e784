/**
 * The device's numeric telemetry as charts: one chart per numeric parameter path, one line per
 * notification name, over the last hour / day / week or a custom from–to range, drawn from the
 * stored history and extended live from the page's feed.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { Api, Notification } from '../api.js'
import type { DeviceFeed } from '../device-feed.js'
import { FeedBadge } from '../device-feed.js'
import { useNow } from '../clock.js'
import { ErrorBox } from '../ui.js'
import { MAX_HISTORY, loadHistory } from './history.js'
import { buildCharts, secondsOf } from './telemetry-data.js'
import { TimeChart } from './time-chart.js'

const SPANS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const
type Preset = keyof typeof SPANS
type Range = { kind: Preset } | { kind: 'custom', from: number, to: number }
const LABELS: Record<Preset | 'custom', string> = { hour: 'Last hour', day: 'Last day', week: 'Last week', custom: 'Custom' }
/** More charts than this would bury the page; the rest are named instead. */
const MAX_CHARTS = 24

/** `datetime-local` value (local time, minutes) for epoch ms, and back. */
function toLocalInput (ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000)
  return d.toISOString().slice(0, 16)
}

function windowOf (range: Range, now: number): { from: number, to: number } {
  return range.kind === 'custom' ? range : { from: now - SPANS[range.kind], to: now }
}

function RangePicker ({ range, onChange }: { range: Range, onChange(range: Range): void }) {
  const now = Date.now()
  const [from, setFrom] = useState(toLocalInput(now - SPANS.day))
  const [to, setTo] = useState(toLocalInput(now))
  const [error, setError] = useState<string | undefined>(undefined)
  const [custom, setCustom] = useState(range.kind === 'custom')
  const apply = (event: Event): void => {
    event.preventDefault()
    const start = new Date(from).getTime()
    const end = new Date(to).getTime()
    if (Number.isNaN(start) || Number.isNaN(end)) setError('Enter both times.')
    else if (start >= end) setError('"From" must be before "To".')
    else {
      setError(undefined)
      onChange({ kind: 'custom', from: start, to: end })
    }
  }
  return (
    <>
      <div class="segmented" role="group" aria-label="Time range">
        {(['hour', 'day', 'week'] as const).map((kind) => (
          <button key={kind} type="button" class="secondary" aria-pressed={!custom && range.kind === kind}
            onClick={() => { setCustom(false); onChange({ kind }) }}>{LABELS[kind]}</button>
        ))}
        <button type="button" class="secondary" aria-pressed={custom} onClick={() => setCustom(true)}>{LABELS.custom}</button>
      </div>
      {custom && (
        <form class="toolbar custom-range" onSubmit={apply} noValidate>
          <label for="range-from">From</label>
          <input id="range-from" type="datetime-local" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
          <label for="range-to">To</label>
          <input id="range-to" type="datetime-local" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
          <button type="submit">Show</button>
          {error !== undefined && <span class="field-error" role="alert">{error}</span>}
        </form>
      )}
    </>
  )
}

export function Telemetry ({ api, deviceId, feed }: { api: Api, deviceId: string, feed: DeviceFeed }) {
  const [range, setRange] = useState<Range>({ kind: 'hour' })
  const [name, setName] = useState('')
  const [names, setNames] = useState<string[]>([])
  const [items, setItems] = useState<Notification[]>([])
  const [capped, setCapped] = useState(false)
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<unknown>(undefined)
  const live = useRef<Notification[]>([])
  const now = useNow()
  const { cursor, subscribe } = feed

  const learn = (incoming: Notification[]): void => setNames((old) => {
    const fresh = incoming.map((n) => n.notification).filter((n, i, all) => !n.startsWith('$') && !old.includes(n) && all.indexOf(n) === i)
    return fresh.length === 0 ? old : [...old, ...fresh].sort()
  })

  // Live items: kept while history loads, merged (by id) when it arrives.
  useEffect(() => {
    live.current = []
    setNames([])
    return subscribe((incoming) => {
      live.current = [...live.current, ...incoming].slice(-MAX_HISTORY)
      learn(incoming)
      setItems((old) => mergeAscending(old, incoming).slice(-MAX_HISTORY))
    })
  }, [deviceId, subscribe])

  useEffect(() => {
    if (cursor === undefined) return
    const controller = new AbortController()
    const { from, to } = windowOf(range, Date.now())
    setLoading(true)
    setError(undefined)
    loadHistory(api, deviceId, { start: from, end: range.kind === 'custom' ? to : undefined, name: name === '' ? undefined : name }, controller.signal)
      .then((history) => {
        learn(history.items)
        setItems(mergeAscending(history.items, live.current))
        setCapped(history.capped)
      }, (err: unknown) => { if (!controller.signal.aborted) setError(err) })
      .finally(() => { if (!controller.signal.aborted) setLoading(false) })
    return () => controller.abort()
  }, [api, deviceId, cursor, range, name])

  const { from, to } = windowOf(range, now)
  const window: [number, number] = [from / 1000, to / 1000]
  const charts = useMemo(() => buildCharts(name === '' ? items : items.filter((n) => n.notification === name), window[0], window[1]),
    [items, name, window[0], window[1]])
  const shown = charts.slice(0, MAX_CHARTS)
  const count = items.filter((n) => !n.notification.startsWith('$') && (name === '' || n.notification === name) && secondsOf(n) >= window[0] && secondsOf(n) <= window[1]).length

  return (
    <section aria-labelledby="telemetry-title" class="panel telemetry">
      <h2 id="telemetry-title">Telemetry <FeedBadge state={feed.state} quiet /></h2>
      <div class="toolbar">
        <RangePicker range={range} onChange={setRange} />
        <label for="telemetry-name">Notification</label>
        <select id="telemetry-name" value={name} onChange={(e) => setName(e.currentTarget.value)}>
          <option value="">All notifications</option>
          {names.map((n) => <option key={n} value={n}>{n}</option>)}
        </select>
      </div>
      <ErrorBox error={error ?? feed.error} />
      <p class="muted telemetry-summary" role="status">
        {feed.error !== undefined ? '' : loading ? 'Loading history…' : summary(count, charts.length, capped, range, from, to)}
      </p>
      {!loading && charts.length === 0 && error === undefined && (
        <p>No numeric parameters in this range. Charts show every number in the notifications' <code>parameters</code>.</p>
      )}
      <div class="charts">
        {shown.map((chart) => (
          <figure key={chart.path} class="chart-card" data-path={chart.path}>
            <figcaption><code>{chart.path}</code></figcaption>
            <TimeChart title={`${chart.path} over time`} yLabel={chart.path} labels={chart.names} data={[chart.x, ...chart.ys]} range={window} />
          </figure>
        ))}
      </div>
      {charts.length > MAX_CHARTS && <p class="muted">Not drawn: {charts.slice(MAX_CHARTS).map((c) => c.path).join(', ')}.</p>}
    </section>
  )
}

function summary (count: number, paths: number, capped: boolean, range: Range, from: number, to: number): string {
  const span = range.kind === 'custom'
    ? `from ${new Date(from).toLocaleString()} to ${new Date(to).toLocaleString()}`
    : LABELS[range.kind].toLowerCase()
  const what = `${count} notification${count === 1 ? '' : 's'} ${span}, ${paths} numeric parameter${paths === 1 ? '' : 's'}`
  return capped ? `Showing the latest ${MAX_HISTORY.toLocaleString()} notifications of this range (older ones are not drawn): ${what}.` : `${what}.`
}

/** `old` (ascending) plus the new ones of `incoming`, ascending by time, then id. */
function mergeAscending (old: Notification[], incoming: Notification[]): Notification[] {
  const known = new Set(old.map((n) => n.id))
  const fresh = incoming.filter((n) => !known.has(n.id))
  if (fresh.length === 0) return old
  return [...old, ...fresh].sort((a, b) => a.timestamp === b.timestamp ? a.id - b.id : (a.timestamp < b.timestamp ? -1 : 1))
}
