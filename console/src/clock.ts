/**
 * One shared ticking clock for relative times ("12 s ago"): every component that shows one
 * re-renders on the same timer, however many are on the page, and the timer stops when none is.
 */
import { useEffect, useState } from 'preact/hooks'

const TICK_MS = 5_000
const listeners = new Set<(now: number) => void>()
let timer: ReturnType<typeof setInterval> | undefined

function subscribe (listener: (now: number) => void): () => void {
  listeners.add(listener)
  timer ??= setInterval(() => {
    const now = Date.now()
    for (const l of listeners) l(now)
  }, TICK_MS)
  return () => {
    listeners.delete(listener)
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
  }
}

/** The current time in epoch ms, updated every 5 s while the component is mounted. */
export function useNow (): number {
  const [now, setNow] = useState(Date.now())
  useEffect(() => subscribe(setNow), [])
  return now
}
