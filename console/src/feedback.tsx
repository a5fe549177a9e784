/**
 * One way for a page to report what its actions did: the outcome of the last action, an error
 * (as the API phrased it) or a short note of success. A new action clears the old outcome before
 * it runs, and leaving the page (any hash navigation) clears it too, so no banner outlives the
 * action it was about.
 */
import { useCallback, useEffect, useState } from 'preact/hooks'
import { ErrorBox, Notice } from './ui.js'

export interface Feedback {
  error: unknown
  done: string | undefined
  /**
   * Runs `action`; on success shows `done` (a text, or made from the result), on failure the error.
   * Resolves to the result, or undefined when the action failed.
   */
  run<T>(action: () => Promise<T>, done?: string | ((result: T) => string)): Promise<T | undefined>
  /** Shows an error found before any request was sent. */
  fail(error: unknown): void
  clear(): void
}

/** A page's action outcome; cleared on the next action and on navigation. */
export function useFeedback (): Feedback {
  const [error, setError] = useState<unknown>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  const clear = useCallback(() => {
    setError(undefined)
    setDone(undefined)
  }, [])
  useEffect(() => {
    addEventListener('hashchange', clear)
    return () => removeEventListener('hashchange', clear)
  }, [clear])
  const run = useCallback(async <T, >(action: () => Promise<T>, message?: string | ((result: T) => string)): Promise<T | undefined> => {
    clear()
    try {
      const result = await action()
      if (message !== undefined) setDone(typeof message === 'string' ? message : message(result))
      return result
    } catch (err) {
      setError(err)
      return undefined
    }
  }, [clear])
  const fail = useCallback((err: unknown) => {
    setDone(undefined)
    setError(err)
  }, [])
  return { error, done, run, fail, clear }
}

/** The outcome of the page's last action: its error or its success note. */
export function FeedbackBox ({ feedback }: { feedback: Feedback }) {
  return (
    <>
      <ErrorBox error={feedback.error} />
      {feedback.done !== undefined && <Notice>{feedback.done}</Notice>}
    </>
  )
}
