/**
 * The devicehub web console: a single-page app over the REST API of its own origin. Hash routes
 * (`#/devices`, `#/device/<id>`, ...) so the server serves one page.
 */
import { render } from 'preact'
import { useEffect, useErrorBoundary, useState } from 'preact/hooks'
import type { Api, User } from './api.js'
import { createApi, errorText } from './api.js'
import { DevicePage } from './pages/device.js'
import { DevicesPage } from './pages/devices.js'
import { LoginPage } from './pages/login.js'
import { NamedEntitiesPage } from './pages/named-entities.js'
import { NetworkPage } from './pages/network.js'
import { TokenPage } from './pages/token.js'
import { UserPage, UsersPage } from './pages/users.js'
import { ErrorBox, Notice } from './ui.js'

function currentRoute (): string[] {
  // A page's own state (list page, search) follows a `?` and is not part of the route.
  const hash = location.hash.replace(/^#\/?/, '').split('?')[0]!
  return hash === '' ? ['devices'] : hash.split('/').map((part) => decodeURIComponent(part))
}

function useRoute (): string[] {
  const [route, setRoute] = useState(currentRoute())
  useEffect(() => {
    const onChange = (): void => setRoute(currentRoute())
    addEventListener('hashchange', onChange)
    return () => removeEventListener('hashchange', onChange)
  }, [])
  return route
}

/** A page that throws while rendering shows the error instead of a blank screen. */
function Guarded ({ api, user, route }: { api: Api, user: User, route: string[] }) {
  const [error, reset] = useErrorBoundary()
  useEffect(() => { if (error !== undefined) reset() }, [route.join('/')])
  if (error !== undefined) return <ErrorBox error={error} />
  return <Page api={api} user={user} route={route} />
}

function Page ({ api, user, route }: { api: Api, user: User, route: string[] }) {
  const [page, id] = route
  switch (page) {
    case 'devices': return <DevicesPage api={api} />
    case 'device': return id === undefined ? <DevicesPage api={api} /> : <DevicePage api={api} deviceId={id} />
    case 'networks': return <NamedEntitiesPage api={api} kind="network" isAdmin={user.role === 0} />
    case 'device-types': return <NamedEntitiesPage api={api} kind="devicetype" isAdmin={user.role === 0} />
    case 'users': return id === undefined ? <UsersPage api={api} /> : <UserPage api={api} userId={id} />
    case 'token': return <TokenPage api={api} user={user} />
    case 'summary': return <NetworkPage api={api} networkId={id === undefined || !/^\d+$/.test(id) ? undefined : Number(id)} />
    default: return <ErrorBox error={new Error(`There is no page '${page ?? ''}'.`)} />
  }
}

const LINKS: Array<[string, string, boolean]> = [
  ['devices', 'Devices', false],
  ['networks', 'Networks', false],
  ['device-types', 'Device types', false],
  ['users', 'Users', true],
  ['token', 'Script token', false],
  ['summary', 'Summary', false]
]

function App ({ api }: { api: Api }) {
  const route = useRoute()
  const [user, setUser] = useState<User | undefined>(undefined)
  const [checking, setChecking] = useState(api.signedIn())
  const [error, setError] = useState<unknown>(undefined)
  const [notice, setNotice] = useState<string | undefined>(undefined)

  useEffect(() => {
    api.onSignedOut((reason) => {
      setUser(undefined)
      setNotice(reason)
    })
    if (!api.signedIn()) return
    api.request<User>('GET', '/user/current').then(setUser, (err: unknown) => {
      setError(err)
      api.signOut()
    }).finally(() => setChecking(false))
  }, [api])

  useEffect(() => {
    const main = document.getElementById('main')
    main?.focus()
    document.title = `${route[0] ?? 'devices'} · devicehub console`
  }, [route.join('/'), user?.id])

  if (checking) return <p class="loading" role="status">Loading…</p>
  if (user === undefined) {
    return <LoginPage api={api} notice={notice} error={error} onSignedIn={(u) => { setError(undefined); setNotice(undefined); setUser(u) }} />
  }
  const isAdmin = user.role === 0
  const signOut = (): void => {
    api.signOut()
    setUser(undefined)
    setNotice('You are signed out.')
  }
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus() }}>Skip to content</a>
      <header class="top">
        <span class="brand">devicehub</span>
        <nav aria-label="Main">
          <ul>
            {LINKS.filter(([, , admin]) => !admin || isAdmin).map(([path, label]) => (
              <li key={path}><a href={`#/${path}`} aria-current={route[0] === path || (path === 'devices' && route[0] === 'device') ? 'page' : undefined}>{label}</a></li>
            ))}
          </ul>
        </nav>
        <span class="who">Signed in as <strong>{user.login}</strong>{isAdmin ? ' (admin)' : ''}</span>
        <button type="button" class="secondary" onClick={signOut}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        {notice !== undefined && <Notice>{notice}</Notice>}
        <Guarded api={api} user={user} route={route} />
      </main>
    </>
  )
}

const base = document.querySelector<HTMLMetaElement>('meta[name="devicehub-rest-base"]')?.content ?? '/api/rest'
const root = document.getElementById('app')!
try {
  render(<App api={createApi(base)} />, root)
} catch (error) {
  root.textContent = `The console failed to start: ${errorText(error)}`
}
