/** Users (admins): list, create, and one user's network and device-type assignments. */
import { useEffect, useState } from 'preact/hooks'
import type { Api, Named, User } from '../api.js'
import { useConfirm } from '../confirm-dialog.js'
import { FeedbackBox, useFeedback } from '../feedback.js'
import { Pager, usePagedList } from '../pagination.js'
import { ErrorBox, Field, When, useLoad } from '../ui.js'

const ROLES = ['Administrator', 'Client'] as const
const STATUSES = ['Active', 'Locked', 'Disabled'] as const

export function UsersPage ({ api }: { api: Api }) {
  const users = usePagedList<User>(api, '/user', {}, { sortField: 'login' })
  const [login, setLogin] = useState('')
  const [password, setPassword] = useState('')
  const [role, setRole] = useState('1')
  const feedback = useFeedback()

  async function create (event: Event): Promise<void> {
    event.preventDefault()
    const name = login.trim()
    const created = await feedback.run(() => api.request<{ id: number }>('POST', '/user', { login: name, password, role: Number(role), status: 0 }),
      (c) => `Created user ${name} (#${c.id}).`)
    if (created === undefined) return
    setLogin('')
    setPassword('')
    users.reload()
  }

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <ErrorBox error={users.error} />
      <Pager list={users} noun="user" />
      {users.data !== undefined && (
        <table class="list">
          <caption class="visually-hidden">Users</caption>
          <thead><tr><th scope="col">Id</th><th scope="col">Login</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Last login</th></tr></thead>
          <tbody>
            {users.data.map((u) => (
              <tr key={u.id}>
                <td>{u.id}</td>
                <td><a href={`#/users/${u.id}`}>{u.login}</a></td>
                <td>{ROLES[u.role] ?? u.role}</td>
                <td>{STATUSES[u.status] ?? u.status}</td>
                <td><When value={u.lastLogin} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {users.error === undefined && (
        <form class="panel" onSubmit={(e) => { void create(e) }} aria-labelledby="new-user-title">
          <h2 id="new-user-title">New user</h2>
          <FeedbackBox feedback={feedback} />
          <Field id="new-user-login" label="Login">
            <input id="new-user-login" required maxLength={128} autocomplete="off" value={login} onInput={(e) => setLogin(e.currentTarget.value)} />
          </Field>
          <Field id="new-user-password" label="Password">
            <input id="new-user-password" type="password" required autocomplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          </Field>
          <Field id="new-user-role" label="Role">
            <select id="new-user-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
              <option value="1">Client</option>
              <option value="0">Administrator</option>
            </select>
          </Field>
          <button type="submit">Create user</button>
        </form>
      )}
    </section>
  )
}

interface UserDetail extends User {
  networks: Named[]
}

export function UserPage ({ api, userId }: { api: Api, userId: string }) {
  const user = useLoad(() => api.request<UserDetail>('GET', `/user/${encodeURIComponent(userId)}`), [userId])
  const networks = useLoad(() => api.request<Named[]>('GET', '/network?sortField=name'), [])
  const types = useLoad(() => api.request<Named[]>('GET', '/devicetype?sortField=name'), [])
  const assignedTypes = useLoad(() => api.request<Named[]>('GET', `/user/${encodeURIComponent(userId)}/devicetype`), [userId])
  const feedback = useFeedback()
  const [dialog, ask] = useConfirm()
  const [busy, setBusy] = useState(false)
  // Checkbox states the user just chose, shown until the reloaded user confirms them: both loads
  // must be back, or the one that returns first would show the other's stale state for a moment.
  const [chosen, setChosen] = useState<Map<string, boolean>>(new Map())
  const reloaded = !user.loading && !assignedTypes.loading
  useEffect(() => {
    if (reloaded) setChosen(new Map())
  }, [user.data, assignedTypes.data, reloaded])

  /** A ticked or cleared box: the box keeps its state until the change is confirmed, then it is made. */
  async function change (event: Event, path: string, what: string): Promise<void> {
    const box = event.currentTarget as HTMLInputElement
    const assign = box.checked
    box.checked = !assign
    const login = user.data?.login ?? `#${userId}`
    const question = assign
      ? { title: path === '/devicetype/all' ? `Allow user ${login} all device types?` : `Assign ${what} to user ${login}?`, confirm: 'Assign' }
      : { title: path === '/devicetype/all' ? `Stop allowing user ${login} all device types?` : `Unassign ${what} from user ${login}?`, confirm: 'Unassign' }
    if (!await ask(question)) return
    setBusy(true)
    setChosen((old) => new Map(old).set(path, assign))
    await feedback.run(() => api.request(assign ? 'PUT' : 'DELETE', `/user/${encodeURIComponent(userId)}${path}`),
      assign ? `Assigned ${what} to ${login}.` : `Unassigned ${what} from ${login}.`)
    setBusy(false)
    user.reload()
    assignedTypes.reload()
  }
  const isChecked = (path: string, assigned: boolean): boolean => chosen.get(path) ?? assigned

  const u = user.data
  const assignedNetworks = new Set(u?.networks.map((n) => n.id) ?? [])
  const assignedTypeIds = new Set(assignedTypes.data?.map((n) => n.id) ?? [])
  return (
    <section aria-labelledby="user-title">
      <p><a href="#/users">← All users</a></p>
      <h1 id="user-title">{u === undefined ? `User #${userId}` : `User ${u.login}`}</h1>
      <ErrorBox error={user.error ?? networks.error ?? types.error ?? assignedTypes.error} />
      <FeedbackBox feedback={feedback} />
      {dialog}
      {u !== undefined && (
        <>
          <dl class="facts">
            <dt>Id</dt><dd>{u.id}</dd>
            <dt>Role</dt><dd>{ROLES[u.role] ?? u.role}</dd>
            <dt>Status</dt><dd>{STATUSES[u.status] ?? u.status}</dd>
            <dt>Last login</dt><dd><When value={u.lastLogin} /></dd>
          </dl>
          <div class="columns">
            <fieldset class="panel" disabled={busy}>
              <legend>Networks</legend>
              {networks.data?.map((n) => (
                <div class="check" key={n.id}>
                  <input type="checkbox" id={`net-${n.id}`} checked={isChecked(`/network/${n.id}`, assignedNetworks.has(n.id))}
                    onChange={(e) => { void change(e, `/network/${n.id}`, `network ${n.name}`) }} />
                  <label for={`net-${n.id}`}>{n.name}</label>
                </div>
              ))}
            </fieldset>
            <fieldset class="panel" disabled={busy}>
              <legend>Device types</legend>
              <div class="check">
                <input type="checkbox" id="types-all" checked={isChecked('/devicetype/all', u.allDeviceTypesAvailable)}
                  onChange={(e) => { void change(e, '/devicetype/all', 'all device types') }} />
                <label for="types-all">All device types</label>
              </div>
              {!u.allDeviceTypesAvailable && types.data?.map((n) => (
                <div class="check" key={n.id}>
                  <input type="checkbox" id={`type-${n.id}`} checked={isChecked(`/devicetype/${n.id}`, assignedTypeIds.has(n.id))}
                    onChange={(e) => { void change(e, `/devicetype/${n.id}`, `device type ${n.name}`) }} />
                  <label for={`type-${n.id}`}>{n.name}</label>
                </div>
              ))}
            </fieldset>
          </div>
        </>
      )}
    </section>
  )
}
