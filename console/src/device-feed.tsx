/**
 * One live notification feed per device page, shared by the raw list and the charts (one
 * stream, not one per panel). It starts at the server's time; every panel loads its history
 * after {@link DeviceFeed.cursor} is known, so history and feed overlap (panels drop repeats by
 * id) and nothing falls between them.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import type { Api, Notification } from './api.js'
import type { FeedState } from './feed.js'
import { openSseFeed } from './feed.js'

export type FeedListener = (items: Notification[]) => void

export interface DeviceFeed {
  /** The server time the feed starts after; undefined until known. */
  cursor: string | undefined
  state: FeedState
  error: unknown
  /** Receives every live notification from now on; returns the unsubscribe function. */
  subscribe(listener: FeedListener): () => void
}

export function useDeviceFeed (api: Api, deviceId: string): DeviceFeed {
  const listeners = useRef(new Set<FeedListener>())
  const [cursor, setCursor] = useState<string | undefined>(undefined)
  const [state, setState] = useState<FeedState>({ kind: 'closed' })
  const [error, setError] = useState<unknown>(undefined)

  useEffect(() => {
    let feed: { close(): void } | undefined
    let cancelled = false
    setCursor(undefined)
    setError(undefined)
    api.request<{ serverTimestamp: string }>('GET', '/info').then((info) => {
      if (cancelled) return
      setCursor(info.serverTimestamp)
      feed = openSseFeed(api, deviceId, info.serverTimestamp, {
        onItems: (items) => { for (const listener of listeners.current) listener(items) },
        onState: setState
      })
    }, setError)
    return () => {
      cancelled = true
      feed?.close()
    }
  }, [api, deviceId])

  const subscribe = useCallback((listener: FeedListener) => {
    listeners.current.add(listener)
    return () => { listeners.current.delete(listener) }
  }, [])
  return { cursor, state, error, subscribe }
}

/**
 * The feed's connection state as a small badge. `quiet` ones (panels that share a feed whose
 * state is shown elsewhere too) take their own class names, so `.badge.live` names one badge.
 */
export function FeedBadge ({ state, quiet = false }: { state: FeedState, quiet?: boolean }) {
  const prefix = quiet ? 'badge-' : ''
  if (state.kind === 'live') return <span class={`badge ${prefix}live`}>live</span>
  if (state.kind === 'reconnecting') return <span class={`badge ${prefix}warn`}>reconnecting</span>
  return <span class="badge">connecting</span>
}
