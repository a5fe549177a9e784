/**
 * One device: its fields and presence, charts of its numeric telemetry, the live notification
 * feed, command history and a form that sends a command and shows its status and result once
 * the device updates it.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import type { Api, Command, Device, Named, Notification } from '../api.js'
import { errorText } from '../api.js'
import type { DeviceFeed } from '../device-feed.js'
import { FeedBadge, useDeviceFeed } from '../device-feed.js'
import { Telemetry } from '../charts/telemetry.js'
import { ErrorBox, Field, Json, OnlineDot, When, describedBy, useLoad } from '../ui.js'

const FEED_LIMIT = 100

function path (deviceId: string, rest = ''): string {
  return `/device/${encodeURIComponent(deviceId)}${rest}`
}

/** Newest first; the server's timestamps sort as text (one format, UTC). */
function newestFirst (a: Notification, b: Notification): number {
  return a.timestamp === b.timestamp ? b.id - a.id : (a.timestamp < b.timestamp ? 1 : -1)
}

function LiveFeed ({ api, deviceId, feed }: { api: Api, deviceId: string, feed: DeviceFeed }) {
  const [items, setItems] = useState<Notification[]>([])
  const [error, setError] = useState<unknown>(undefined)
  // Until the history is back, an empty list means "not known yet", not "none".
  const [historyLoaded, setHistoryLoaded] = useState(false)
  const { state, cursor, subscribe } = feed

  useEffect(() => {
    setItems([])
    return subscribe((incoming) => setItems((old) => merge(old, incoming)))
  }, [deviceId, subscribe])
  // The last 20 once the feed's start is known: they overlap the feed, repeats are dropped.
  useEffect(() => {
    setHistoryLoaded(false)
    if (cursor === undefined) return
    let cancelled = false
    api.request<Notification[]>('GET', path(deviceId, '/notification?sortField=timestamp&sortOrder=DESC&take=20'))
      .then((history) => { if (!cancelled) setItems((old) => merge(old, history)) }, setError)
      .finally(() => { if (!cancelled) setHistoryLoaded(true) })
    return () => { cancelled = true }
  }, [api, deviceId, cursor])

  return (
    <section aria-labelledby="feed-title" class="panel">
      <h2 id="feed-title">Notifications <FeedBadge state={state} /></h2>
      <ErrorBox error={error ?? feed.error} />
      {state.kind === 'reconnecting' && <p class="warning" role="status">Connection lost ({state.message}); reconnecting…</p>}
      {items.length === 0 ? <p class="muted" role="status">{historyLoaded ? 'No notifications yet.' : 'Loading notifications…'}</p> : (
        <ol class="feed" aria-live="polite" aria-relevant="additions">
          {items.map((n) => (
            <li key={n.id} class="feed-item" data-notification-id={n.id}>
              <div class="feed-head"><span class="feed-name">{n.notification}</span><When value={n.timestamp} /></div>
              {n.parameters !== null && <Json value={n.parameters} />}
            </li>
          ))}
        </ol>
      )}
    </section>
  )
}

function merge (old: Notification[], incoming: Notification[]): Notification[] {
  const known = new Set(old.map((n) => n.id))
  const fresh = incoming.filter((n) => !known.has(n.id))
  return fresh.length === 0 ? old : [...fresh, ...old].sort(newestFirst).slice(0, FEED_LIMIT)
}

function CommandForm ({ api, deviceId, onSent }: { api: Api, deviceId: string, onSent(): void }) {
  const [name, setName] = useState('')
  const [parameters, setParameters] = useState('{}')
  const [nameError, setNameError] = useState<string | undefined>(undefined)
  const [jsonError, setJsonError] = useState<string | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [sent, setSent] = useState<Command | undefined>(undefined)
  const [waiting, setWaiting] = useState(false)
  const controller = useRef<AbortController | undefined>(undefined)

  useEffect(() => () => controller.current?.abort(), [])

  async function submit (event: Event): Promise<void> {
    event.preventDefault()
    setError(undefined)
    const trimmed = name.trim()
    setNameError(trimmed === '' ? 'Enter a command name.' : trimmed.length > 128 ? 'At most 128 characters.' : undefined)
    let parsed: unknown
    try {
      parsed = parameters.trim() === '' ? {} : JSON.parse(parameters)
      setJsonError(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? undefined : 'Parameters must be a JSON object, e.g. {"level": 5}.')
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return
    } catch (err) {
      setJsonError(`Parameters are not valid JSON: ${errorText(err)}`)
      return
    }
    if (trimmed === '' || trimmed.length > 128) return
    controller.current?.abort()
    const abort = new AbortController()
    controller.current = abort
    try {
      const created = await api.request<{ id: number, timestamp: string, userId: number | null }>('POST', path(deviceId, '/command'), { command: trimmed, parameters: parsed })
      const command: Command = { ...created, command: trimmed, lastUpdated: created.timestamp, parameters: parsed as Record<string, unknown>, status: null, result: null }
      setSent(command)
      onSent()
      setWaiting(true)
      // Wait for the device's update; each wait is at most 30 s, so keep asking while the page is open.
      while (!abort.signal.aborted) {
        const updated = await api.request<Command | undefined>('GET', path(deviceId, `/command/${created.id}/poll?waitTimeout=30`), undefined, abort.signal)
        if (updated !== undefined) {
          setSent(updated)
          onSent()
          break
        }
      }
    } catch (err) {
      if (!abort.signal.aborted) setError(err)
    } finally {
      if (controller.current === abort) setWaiting(false)
    }
  }

  return (
    <section aria-labelledby="send-title" class="panel">
      <h2 id="send-title">Send a command</h2>
      <form onSubmit={(e) => { void submit(e) }} noValidate>
        <Field id="command-name" label="Command name" error={nameError}>
          <input id="command-name" value={name} onInput={(e) => setName(e.currentTarget.value)} aria-invalid={nameError !== undefined}
            aria-describedby={describedBy('command-name', false, nameError !== undefined)} maxLength={128} />
        </Field>
        <Field id="command-parameters" label="Parameters (JSON object)" hint='For example {"level": 5}' error={jsonError}>
          <textarea id="command-parameters" rows={4} value={parameters} onInput={(e) => setParameters(e.currentTarget.value)} spellcheck={false}
            aria-invalid={jsonError !== undefined} aria-describedby={describedBy('command-parameters', true, jsonError !== undefined)} />
        </Field>
        <button type="submit">Send command</button>
      </form>
      <ErrorBox error={error} />
      {sent !== undefined && (
        <div class="command-status" role="status" aria-live="polite">
          <p>Command <strong>{sent.command}</strong> (#{sent.id}): {' '}
            {sent.status === null && sent.result === null
              ? <span class="waiting">{waiting ? 'sent, waiting for the device…' : 'sent, not answered yet'}</span>
              : <span>status <strong class="status-value">{sent.status ?? 'none'}</strong></span>}
          </p>
          {sent.result !== null && <><p>Result:</p><Json value={sent.result} /></>}
        </div>
      )}
    </section>
  )
}

function CommandHistory ({ api, deviceId, version }: { api: Api, deviceId: string, version: number }) {
  const commands = useLoad(() => api.request<Command[]>('GET', path(deviceId, '/command?sortField=timestamp&sortOrder=DESC&take=20')), [deviceId, version])
  return (
    <section aria-labelledby="history-title" class="panel">
      <h2 id="history-title">Command history</h2>
      <ErrorBox error={commands.error} />
      {commands.data?.length === 0 && <p class="muted">No commands yet.</p>}
      {commands.data !== undefined && commands.data.length > 0 && (
        <table class="list">
          <caption class="visually-hidden">Last 20 commands, newest first</caption>
          <thead><tr><th scope="col">Id</th><th scope="col">Command</th><th scope="col">Sent</th><th scope="col">Status</th><th scope="col">Result</th></tr></thead>
          <tbody>
            {commands.data.map((c) => (
              <tr key={c.id}>
                <td>{c.id}</td>
                <td><code>{c.command}</code><Json value={c.parameters} /></td>
                <td><When value={c.timestamp} /></td>
                <td>{c.status ?? <span class="muted">pending</span>}</td>
                <td><Json value={c.result} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <button type="button" class="secondary" onClick={commands.reload}>Refresh history</button>
    </section>
  )
}

export function DevicePage ({ api, deviceId }: { api: Api, deviceId: string }) {
  const device = useLoad(() => api.request<Device>('GET', path(deviceId)), [deviceId])
  // Names for the ids; a list the user may not read just leaves the ids.
  const names = useLoad(async () => {
    const [networks, types] = await Promise.all([
      api.request<Named[]>('GET', '/network').catch(() => []),
      api.request<Named[]>('GET', '/devicetype').catch(() => [])
    ])
    return { networks, types }
  }, [])
  const nameOf = (list: Named[] | undefined, id: number): string => list?.find((n) => n.id === id)?.name ?? `#${id}`
  const [version, setVersion] = useState(0)
  const feed = useDeviceFeed(api, deviceId)
  useEffect(() => {
    const timer = setInterval(device.reload, 10_000)
    return () => clearInterval(timer)
  }, [device.reload])
  const d = device.data
  return (
    <section aria-labelledby="device-title">
      <p><a href="#/devices">← All devices</a></p>
      <h1 id="device-title">{d?.name ?? deviceId}</h1>
      <ErrorBox error={device.error} />
      {d !== undefined && (
        <>
          <dl class="facts">
            <dt>Id</dt><dd><code>{d.id}</code></dd>
            <dt>Status</dt><dd><OnlineDot online={d.online} /></dd>
            <dt>Last seen</dt><dd><When value={d.lastSeen} /></dd>
            <dt>Network</dt><dd>{nameOf(names.data?.networks, d.networkId)}</dd>
            <dt>Device type</dt><dd>{nameOf(names.data?.types, d.deviceTypeId)}</dd>
            <dt>Blocked</dt><dd>{d.isBlocked ? 'yes' : 'no'}</dd>
            <dt>Data</dt><dd><Json value={d.data} /></dd>
          </dl>
          <Telemetry api={api} deviceId={deviceId} feed={feed} />
          <div class="columns">
            <LiveFeed api={api} deviceId={deviceId} feed={feed} />
            <div>
              <CommandForm api={api} deviceId={deviceId} onSent={() => setVersion((v) => v + 1)} />
              <CommandHistory api={api} deviceId={deviceId} version={version} />
            </div>
          </div>
        </>
      )}
    </section>
  )
}
