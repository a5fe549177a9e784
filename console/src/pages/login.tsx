/** Sign in with login and password; the token pair goes to sessionStorage. */
import { useState } from 'preact/hooks'
import type { Api, User } from '../api.js'
import { ErrorBox, Field, Notice } from '../ui.js'

export function LoginPage ({ api, notice, error, onSignedIn }: { api: Api, notice?: string, error?: unknown, onSignedIn(user: User): void }) {
  const [login, setLogin] = useState('')
  const [password, setPassword] = useState('')
  const [failure, setFailure] = useState<unknown>(error)
  const [busy, setBusy] = useState(false)

  async function submit (event: Event): Promise<void> {
    event.preventDefault()
    setBusy(true)
    setFailure(undefined)
    try {
      await api.signIn(login, password)
      onSignedIn(await api.request<User>('GET', '/user/current'))
    } catch (err) {
      api.signOut()
      setFailure(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <main id="main" class="login" tabIndex={-1}>
      <h1>devicehub console</h1>
      {notice !== undefined && <Notice>{notice}</Notice>}
      <form onSubmit={(e) => { void submit(e) }} aria-label="Sign in">
        <Field id="login" label="Login">
          <input id="login" name="login" autocomplete="username" required value={login} onInput={(e) => setLogin(e.currentTarget.value)} />
        </Field>
        <Field id="password" label="Password">
          <input id="password" name="password" type="password" autocomplete="current-password" required value={password}
            onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <ErrorBox error={failure} />
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
    </main>
  )
}
