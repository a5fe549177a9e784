/**
 * A summary of the devices in scope, or of one network: how many are online and offline (the
 * server's presence: `GET /device/count?online=`), and the notifications they posted per minute
 * over the last 10 minutes, counted from the notification stream (its backlog, then live).
 */
import { useEffect, useMemo, useState } from 'preact/hooks'
import type { Api, Named, Notification } from '../api.js'
import { parseServerTime } from '../api.js'
import { useNow } from '../clock.js'
import type { FeedState } from '../feed.js'
import { openEventStream } from '../feed.js'
import { FeedBadge } from '../device-feed.js'
import { TimeChart } from '../charts/time-chart.js'
import { ErrorBox, useLoad } from '../ui.js'

const MINUTES = 10
/** Networks whose counts are shown in the table; beyond, pick one from the list. */
const MAX_ROWS = 50

interface Counts { total: number, online: number }

async function countsOf (api: Api, networkId?: number): Promise<Counts> {
  const scope = networkId === undefined ? '' : `networkId=${networkId}&`
  const [total, online] = await Promise.all([
    api.request<{ count: number }>('GET', `/device/count?${scope}`),
    api.request<{ count: number }>('GET', `/device/count?${scope}online=true`)
  ])
  return { total: total.count, online: online.count }
}

/** Notification times (epoch ms) of the last {@link MINUTES} minutes, from the stream; and the server's clock offset. */
function useNotificationRate (api: Api, networkId: number | undefined): { times: number[], offset: number, state: FeedState, error: unknown } {
  const [times, setTimes] = useState<number[]>([])
  const [offset, setOffset] = useState(0)
  const [state, setState] = useState<FeedState>({ kind: 'closed' })
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    let feed: { close(): void } | undefined
    let cancelled = false
    setTimes([])
    api.request<{ serverTimestamp: string }>('GET', '/info').then((info) => {
      if (cancelled) return
      const serverNow = parseServerTime(info.serverTimestamp).getTime()
      const skew = serverNow - Date.now()
      setOffset(skew)
      const query = new URLSearchParams({ timestamp: new Date(serverNow - MINUTES * 60_000).toISOString() })
      if (networkId !== undefined) query.set('networkIds', String(networkId))
      feed = openEventStream<Notification>(api, `/device/notification/stream?${query.toString()}`, {
        onItems: (items) => setTimes((old) => {
          const since = Date.now() + skew - MINUTES * 60_000 * 2
          return [...old.filter((t) => t >= since), ...items.map((n) => parseServerTime(n.timestamp).getTime())]
        }),
        onState: setState
      })
    }, setError)
    return () => {
      cancelled = true
      feed?.close()
    }
  }, [api, networkId])
  return { times, offset, state, error }
}

function Stat ({ id, label, value, tone }: { id: string, label: string, value: string, tone?: 'ok' | 'muted' }) {
  return (
    <div class={`stat${tone === undefined ? '' : ` ${tone}`}`} data-stat={id}>
      <span class="stat-value">{value}</span>
      <span class="stat-label">{label}</span>
    </div>
  )
}

export function NetworkPage ({ api, networkId }: { api: Api, networkId: number | undefined }) {
  const networks = useLoad(() => api.request<Named[]>('GET', '/network'), [])
  const counts = useLoad(async () => ({ networkId, ...await countsOf(api, networkId) }), [networkId])
  const rows = useLoad(async () => networkId !== undefined || networks.data === undefined
    ? []
    : await Promise.all(networks.data.slice(0, MAX_ROWS).map(async (n) => ({ network: n, ...await countsOf(api, n.id) }))),
  [networkId, networks.data])
  useEffect(() => {
    const timer = setInterval(() => { counts.reload(); rows.reload() }, 10_000)
    return () => clearInterval(timer)
  }, [counts.reload, rows.reload])

  const rate = useNotificationRate(api, networkId)
  const now = useNow() + rate.offset
  // Whole minutes, the current (partial) one last.
  const perMinute = useMemo(() => {
    const current = Math.floor(now / 60_000)
    const x: number[] = []
    const y: number[] = []
    for (let m = current - MINUTES + 1; m <= current; m++) {
      x.push(m * 60)
      y.push(0)
    }
    for (const t of rate.times) {
      const i = Math.floor(t / 60_000) - (current - MINUTES + 1)
      if (i >= 0 && i < MINUTES) y[i]!++
    }
    return { x, y }
  }, [rate.times, Math.floor(now / 60_000)])
  const lastMinute = rate.times.filter((t) => t > now - 60_000).length
  const average = perMinute.y.slice(0, -1).reduce((a, b) => a + b, 0) / (MINUTES - 1)

  const name = networkId === undefined ? 'All networks' : networks.data?.find((n) => n.id === networkId)?.name ?? `Network #${networkId}`
  // Another network's counts (the last page's, while this one's load) would sit under this title: "…" instead.
  const c = counts.data?.networkId === networkId ? counts.data : undefined
  return (
    <section aria-labelledby="network-title">
      <h1 id="network-title">Summary: {name}</h1>
      <form class="toolbar" onSubmit={(e) => e.preventDefault()}>
        <label for="summary-network">Network</label>
        <select id="summary-network" value={networkId === undefined ? '' : String(networkId)}
          onChange={(e) => { location.hash = e.currentTarget.value === '' ? '#/summary' : `#/summary/${e.currentTarget.value}` }}>
          <option value="">All networks</option>
          {networks.data?.map((n) => <option key={n.id} value={String(n.id)}>{n.name}</option>)}
        </select>
      </form>
      <ErrorBox error={counts.error ?? networks.error ?? rate.error} />
      <div class="stats" aria-label="Devices">
        <Stat id="devices" label="devices" value={c === undefined ? '…' : String(c.total)} />
        <Stat id="online" label="online" tone="ok" value={c === undefined ? '…' : String(c.online)} />
        <Stat id="offline" label="offline" tone="muted" value={c === undefined ? '…' : String(c.total - c.online)} />
        <Stat id="last-minute" label="notifications in the last minute" value={String(lastMinute)} />
        <Stat id="average" label={`per minute, average of the ${MINUTES - 1} minutes before`} value={average.toFixed(1)} />
      </div>
      <section class="panel" aria-labelledby="rate-title">
        <h2 id="rate-title">Notifications per minute <FeedBadge state={rate.state} /></h2>
        <TimeChart title={`Notifications per minute, last ${MINUTES} minutes`} yLabel="notifications" labels={['notifications']}
          data={[perMinute.x, perMinute.y]} range={[perMinute.x[0]! - 30, perMinute.x.at(-1)! + 30]} bars height={200} />
        <p class="muted">Counted by the notifications' server time, from the live notification stream; the current minute is still filling.</p>
        <table class="visually-hidden per-minute">
          <caption>Notifications per minute</caption>
          <thead><tr><th scope="col">Minute</th><th scope="col">Notifications</th></tr></thead>
          <tbody>
            {perMinute.x.map((t, i) => <tr key={t}><td>{new Date(t * 1000).toLocaleTimeString()}</td><td>{perMinute.y[i]}</td></tr>)}
          </tbody>
        </table>
      </section>
      {networkId === undefined && rows.data !== undefined && rows.data.length > 0 && (
        <table class="list">
          <caption>Devices by network{(networks.data?.length ?? 0) > MAX_ROWS ? ` (the first ${MAX_ROWS} networks)` : ''}</caption>
          <thead><tr><th scope="col">Network</th><th scope="col">Devices</th><th scope="col">Online</th><th scope="col">Offline</th></tr></thead>
          <tbody>
            {rows.data.map((r) => (
              <tr key={r.network.id}>
                <td><a href={`#/summary/${r.network.id}`}>{r.network.name}</a></td>
                <td>{r.total}</td>
                <td>{r.online}</td>
                <td>{r.total - r.online}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
