/** Small shared pieces: error and status boxes, data loading, JSON display, the online dot. */
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import { errorText, parseServerTime, relativeTime } from './api.js'
import { useNow } from './clock.js'

/** An API error, exactly as the API phrased it; announced to screen readers. */
export function ErrorBox ({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null
  return <div class="error" role="alert"><strong>Error:</strong> <span class="error-message">{errorText(error)}</span></div>
}

export function Notice ({ children }: { children: ComponentChildren }) {
  return <div class="notice" role="status">{children}</div>
}

export interface Loaded<T> {
  data: T | undefined
  error: unknown
  loading: boolean
  reload(): void
}

/** Runs `load` when `deps` change and on `reload()`; keeps the last data while reloading. */
export function useLoad<T> (load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [loading, setLoading] = useState(true)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let current = true
    setLoading(true)
    load().then((value) => {
      if (!current) return
      setData(value)
      setError(undefined)
    }, (err: unknown) => {
      if (current) setError(err)
    }).finally(() => { if (current) setLoading(false) })
    return () => { current = false }
  }, [...deps, tick])
  const reload = useCallback(() => setTick((n) => n + 1), [])
  return { data, error, loading, reload }
}

export function Json ({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span class="muted">none</span>
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>
}

export function OnlineDot ({ online }: { online: boolean }) {
  return (
    <span class={online ? 'dot online' : 'dot offline'}>
      <span aria-hidden="true">●</span> {online ? 'online' : 'offline'}
    </span>
  )
}

/** A server time as "12 s ago", re-rendered every few seconds while shown. */
export function When ({ value }: { value: string | null }) {
  useNow() // re-render on the shared tick; the text is computed from the time of this render
  if (value === null) return <span class="muted">never</span>
  return <time dateTime={`${value}Z`} title={parseServerTime(value).toLocaleString()}>{relativeTime(value)}</time>
}

/** A labelled input; `hint` and `error` are tied to it with aria-describedby. */
export function Field ({ id, label, hint, error, children }: { id: string, label: string, hint?: string, error?: string, children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint !== undefined && <small id={`${id}-hint`} class="hint">{hint}</small>}
      {error !== undefined && <small id={`${id}-error`} class="field-error" role="alert">{error}</small>}
    </div>
  )
}

export function describedBy (id: string, hint: boolean, error: boolean): string | undefined {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter((x) => x !== '')
  return ids.length === 0 ? undefined : ids.join(' ')
}
