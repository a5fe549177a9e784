/** Mint a scoped token pair for a script; shown once, with copy buttons. */
import { useState } from 'preact/hooks'
import type { Api, Tokens, User } from '../api.js'
import { FeedbackBox, useFeedback } from '../feedback.js'
import { ACTION_CHOICES, DEFAULT_ACTIONS } from '../token-actions.js'
import { ErrorBox, Field, Notice, describedBy, useLoad } from '../ui.js'

function idList (text: string): string[] | null {
  const parts = text.split(',').map((p) => p.trim()).filter((p) => p !== '')
  return parts.length === 0 ? null : parts
}

function CopyField ({ id, label, value }: { id: string, label: string, value: string }) {
  const [copied, setCopied] = useState<string | undefined>(undefined)
  async function copy (): Promise<void> {
    try {
      await navigator.clipboard.writeText(value)
      setCopied('Copied.')
    } catch {
      const input = document.getElementById(id) as HTMLTextAreaElement | null
      input?.select()
      setCopied('Select and copy it with Ctrl+C (the browser refused clipboard access).')
    }
  }
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} class="token" readOnly rows={3} value={value} spellcheck={false} />
      <button type="button" class="secondary" onClick={() => { void copy() }}>Copy {label.toLowerCase()}</button>
      {copied !== undefined && <span role="status" class="hint"> {copied}</span>}
    </div>
  )
}

export function TokenPage ({ api, user }: { api: Api, user: User }) {
  const isAdmin = user.role === 0
  // Administrators mint for anyone, picked by login; anyone else only for themself (the server enforces both).
  const users = useLoad(() => isAdmin ? api.request<User[]>('GET', '/user?sortField=login') : Promise.resolve([user]), [isAdmin, user.id])
  const [login, setLogin] = useState(user.login)
  const [loginError, setLoginError] = useState<string | undefined>(undefined)
  const [actions, setActions] = useState<Set<string>>(new Set(DEFAULT_ACTIONS))
  // A client's own token names its networks, not *; asking for * would exceed it (403).
  const [networks, setNetworks] = useState(isAdmin || user.networks === undefined ? '*' : user.networks.map((n) => n.id).join(', '))
  const [types, setTypes] = useState('*')
  const [expiration, setExpiration] = useState('')
  const feedback = useFeedback()
  const [minted, setMinted] = useState<Tokens | undefined>(undefined)

  function toggle (action: string, on: boolean): void {
    feedback.clear()
    const next = new Set(actions)
    if (on) next.add(action)
    else next.delete(action)
    setActions(next)
  }

  async function submit (event: Event): Promise<void> {
    event.preventDefault()
    setMinted(undefined)
    // Yourself (the default) needs no list: a submit right after the page shows just works.
    const self = !isAdmin || login.trim() === user.login
    if (!self && users.data === undefined) {
      // The logins are still loading (or failed to): "no such user" would be a guess.
      setLoginError(users.loading ? 'The list of users is still loading; try again in a moment.' : undefined)
      return
    }
    const target = self ? user : users.data?.find((u) => u.login === login.trim())
    setLoginError(target === undefined ? `There is no user with the login '${login.trim()}'.` : undefined)
    if (target === undefined) return
    if (actions.size === 0) {
      feedback.fail(new Error('Choose at least one action.'))
      return
    }
    const body: Record<string, unknown> = {
      userId: target.id,
      // In the server's order, whatever order they were ticked in.
      actions: ACTION_CHOICES.filter((a) => actions.has(a.name)).map((a) => a.name),
      networkIds: idList(networks),
      deviceTypeIds: idList(types)
    }
    // datetime-local is local time; the API wants UTC without a zone.
    if (expiration !== '') body.expiration = new Date(expiration).toISOString().replace('Z', '')
    const tokens = await feedback.run(() => api.request<Tokens>('POST', '/token/create', body))
    if (tokens !== undefined) setMinted(tokens)
  }

  return (
    <section aria-labelledby="token-title">
      <h1 id="token-title">Token for a script</h1>
      <p>Mint an access token with only the rights a script needs. It is shown once: copy it now.</p>
      <ErrorBox error={users.error} />
      <form class="panel" onSubmit={(e) => { void submit(e) }}>
        {isAdmin
          ? (
            <Field id="token-user" label="User" hint="The login of the user the token acts for: type to search." error={loginError}>
              <input id="token-user" list="token-user-logins" required autocomplete="off" value={login}
                onInput={(e) => { setLogin(e.currentTarget.value); setLoginError(undefined) }}
                aria-invalid={loginError !== undefined} aria-describedby={describedBy('token-user', true, loginError !== undefined)} />
              <datalist id="token-user-logins">
                {users.data?.map((u) => <option key={u.id} value={u.login}>{u.role === 0 ? 'administrator' : 'client'} #{u.id}</option>)}
              </datalist>
            </Field>
            )
          : <p class="token-for">For you, <strong>{user.login}</strong>: a token can only act for the user who mints it.</p>}
        <fieldset>
          <legend>Actions</legend>
          <p class="hint" id="token-actions-hint">
            Every action the server knows. A token can carry only actions you hold yourself{isAdmin ? '' : '; the administrator-only ones are greyed out'}.
          </p>
          <div class="checks" aria-describedby="token-actions-hint">
            {ACTION_CHOICES.map(({ name, adminOnly }) => (
              <div class="check" key={name}>
                <input type="checkbox" id={`action-${name}`} checked={actions.has(name)} disabled={adminOnly && !isAdmin}
                  onChange={(e) => toggle(name, e.currentTarget.checked)} />
                <label for={`action-${name}`}>{name}</label>
              </div>
            ))}
          </div>
          <div class="toolbar">
            <button type="button" class="secondary" onClick={() => setActions(new Set(ACTION_CHOICES.filter((a) => isAdmin || !a.adminOnly).map((a) => a.name)))}>
              Select all actions
            </button>
            <button type="button" class="secondary" onClick={() => setActions(new Set())}>Clear actions</button>
          </div>
        </fieldset>
        <Field id="token-networks" label="Network ids" hint="Comma-separated ids, or * for all of the user's networks.">
          <input id="token-networks" value={networks} onInput={(e) => setNetworks(e.currentTarget.value)} aria-describedby="token-networks-hint" />
        </Field>
        <Field id="token-types" label="Device type ids" hint="Comma-separated ids, or * for all.">
          <input id="token-types" value={types} onInput={(e) => setTypes(e.currentTarget.value)} aria-describedby="token-types-hint" />
        </Field>
        <Field id="token-expiration" label="Expires (optional)" hint="Leave empty for the server's default lifetime.">
          <input id="token-expiration" type="datetime-local" value={expiration} onInput={(e) => setExpiration(e.currentTarget.value)} aria-describedby="token-expiration-hint" />
        </Field>
        <FeedbackBox feedback={feedback} />
        <button type="submit">Create token</button>
      </form>
      {minted !== undefined && (
        <div class="panel minted">
          <Notice>Token created. It is shown only this once.</Notice>
          <CopyField id="minted-access" label="Access token" value={minted.accessToken} />
          <CopyField id="minted-refresh" label="Refresh token" value={minted.refreshToken} />
        </div>
      )}
    </section>
  )
}
