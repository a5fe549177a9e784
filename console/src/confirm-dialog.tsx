/**
 * A modal question with labelled answers, on the native `<dialog>` (focus kept inside, Escape
 * cancels, the page behind inert). `useConfirm()` gives the element to render and `ask()`,
 * which resolves to true only when the person chose the confirming button.
 */
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'

export interface Question {
  title: string
  body?: ComponentChildren
  /** The confirming button's label: says exactly what happens ("Delete network and its 3 devices"). */
  confirm: string
  /** Styles the confirming button as destructive. */
  danger?: boolean
}

interface Pending extends Question {
  resolve(answer: boolean): void
}

/** The dialog element and a function that asks a question with it. */
export function useConfirm (): [ComponentChildren, (question: Question) => Promise<boolean>] {
  const [pending, setPending] = useState<Pending | undefined>(undefined)
  const ref = useRef<HTMLDialogElement>(null)
  const ask = useCallback((question: Question) => new Promise<boolean>((resolve) => {
    setPending({ ...question, resolve })
  }), [])
  useEffect(() => {
    if (pending !== undefined && ref.current?.open === false) ref.current.showModal()
  }, [pending])
  const answer = (value: boolean): void => {
    pending?.resolve(value)
    setPending(undefined)
    ref.current?.close()
  }
  const element = pending === undefined
    ? null
    : (
      <dialog ref={ref} class="confirm" aria-labelledby="confirm-title" aria-describedby={pending.body === undefined ? undefined : 'confirm-body'}
        onCancel={(e) => { e.preventDefault(); answer(false) }}>
        <h2 id="confirm-title">{pending.title}</h2>
        {pending.body !== undefined && <div id="confirm-body">{pending.body}</div>}
        <div class="confirm-buttons">
          <button type="button" class={pending.danger === true ? 'danger' : undefined} onClick={() => answer(true)}>{pending.confirm}</button>
          <button type="button" class="secondary" autofocus onClick={() => answer(false)}>Cancel</button>
        </div>
      </dialog>
      )
  return [element, ask]
}
