/** Mint a scoped token pair for a script; shown once, with copy buttons. */
import { useState } from 'preact/hooks'
import type { Api, Tokens, User } from '../api.js'
import { ErrorBox, Field, Notice } from '../ui.js'

const ACTIONS = [
  'GetNetwork', 'GetDevice', 'GetDeviceNotification', 'GetDeviceCommand', 'RegisterDevice', 'CreateDeviceCommand',
  'UpdateDeviceCommand', 'CreateDeviceNotification', 'GetCurrentUser', 'UpdateCurrentUser', 'ManageToken', 'GetDeviceType'
] as const

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
  const [userId, setUserId] = useState(String(user.id))
  const [actions, setActions] = useState<Set<string>>(new Set(['GetDevice', 'GetDeviceNotification', 'CreateDeviceNotification', 'GetDeviceCommand', 'UpdateDeviceCommand']))
  const [networks, setNetworks] = useState('*')
  const [types, setTypes] = useState('*')
  const [expiration, setExpiration] = useState('')
  const [error, setError] = useState<unknown>(undefined)
  const [minted, setMinted] = useState<Tokens | undefined>(undefined)

  function toggle (action: string, on: boolean): void {
    const next = new Set(actions)
    if (on) next.add(action)
    else next.delete(action)
    setActions(next)
  }

  async function submit (event: Event): Promise<void> {
    event.preventDefault()
    setError(undefined)
    setMinted(undefined)
    const body: Record<string, unknown> = {
      userId: Number(userId),
      actions: [...actions],
      networkIds: idList(networks),
      deviceTypeIds: idList(types)
    }
    // datetime-local is local time; the API wants UTC without a zone.
    if (expiration !== '') body.expiration = new Date(expiration).toISOString().replace('Z', '')
    try {
      setMinted(await api.request<Tokens>('POST', '/token/create', body))
    } catch (err) {
      setError(err)
    }
  }

  return (
    <section aria-labelledby="token-title">
      <h1 id="token-title">Token for a script</h1>
      <p>Mint an access token with only the rights a script needs. It is shown once: copy it now.</p>
      <form class="panel" onSubmit={(e) => { void submit(e) }}>
        <Field id="token-user" label="User id" hint="The user the token acts for (yourself unless you are an administrator).">
          <input id="token-user" type="number" min={1} required value={userId} onInput={(e) => setUserId(e.currentTarget.value)} aria-describedby="token-user-hint" />
        </Field>
        <fieldset>
          <legend>Actions</legend>
          <div class="checks">
            {ACTIONS.map((a) => (
              <div class="check" key={a}>
                <input type="checkbox" id={`action-${a}`} checked={actions.has(a)} onChange={(e) => toggle(a, e.currentTarget.checked)} />
                <label for={`action-${a}`}>{a}</label>
              </div>
            ))}
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
        <ErrorBox error={error} />
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
