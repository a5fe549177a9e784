/** Networks and device types: the same shape and rules, one page (create, rename, delete for admins). */
import { useState } from 'preact/hooks'
import type { Api, Named } from '../api.js'
import { Pager, usePagedList } from '../pagination.js'
import { ErrorBox, Field, Notice } from '../ui.js'

const TITLES = { network: ['Networks', 'network'], devicetype: ['Device types', 'device type'] } as const

export function NamedEntitiesPage ({ api, kind, isAdmin }: { api: Api, kind: 'network' | 'devicetype', isAdmin: boolean }) {
  const [title, noun] = TITLES[kind]
  const list = usePagedList<Named>(api, `/${kind}`, {}, { sortField: 'name' })
  const [editing, setEditing] = useState<Named | undefined>(undefined)
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [error, setError] = useState<unknown>(undefined)
  const [saveError, setSaveError] = useState<unknown>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)

  function edit (entity: Named | undefined): void {
    setEditing(entity)
    setName(entity?.name ?? '')
    setDescription(entity?.description ?? '')
    setSaveError(undefined)
    document.getElementById(`${kind}-name`)?.focus()
  }

  async function save (event: Event): Promise<void> {
    event.preventDefault()
    setSaveError(undefined)
    setDone(undefined)
    const body = { name: name.trim(), description: description.trim() === '' ? null : description.trim() }
    try {
      if (editing === undefined) await api.request('POST', `/${kind}`, body)
      else await api.request('PUT', `/${kind}/${editing.id}`, body)
      setDone(editing === undefined ? `Created ${noun} ${body.name}.` : `Saved ${noun} ${body.name}.`)
      edit(undefined)
      list.reload()
    } catch (err) {
      setSaveError(err)
    }
  }

  async function remove (entity: Named): Promise<void> {
    if (!confirm(`Delete ${noun} "${entity.name}"? Its devices are deleted too.`)) return
    setError(undefined)
    setDone(undefined)
    try {
      await api.request('DELETE', `/${kind}/${entity.id}`)
      setDone(`Deleted ${noun} ${entity.name}.`)
      list.reload()
    } catch (err) {
      setError(err)
    }
  }

  return (
    <section aria-labelledby={`${kind}-title`}>
      <h1 id={`${kind}-title`}>{title}</h1>
      <ErrorBox error={list.error ?? error} />
      {done !== undefined && <Notice>{done}</Notice>}
      <Pager list={list} noun={noun} />
      {list.data !== undefined && (
        <table class="list">
          <caption class="visually-hidden">{title}</caption>
          <thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Description</th>{isAdmin && <th scope="col">Actions</th>}</tr></thead>
          <tbody>
            {list.data.map((e) => (
              <tr key={e.id}>
                <td>{e.id}</td>
                <td>{e.name}</td>
                <td>{e.description ?? <span class="muted">none</span>}</td>
                {isAdmin && (
                  <td class="actions">
                    <button type="button" class="secondary" onClick={() => edit(e)} aria-label={`Edit ${e.name}`}>Edit</button>
                    <button type="button" class="danger" onClick={() => { void remove(e) }} aria-label={`Delete ${e.name}`}>Delete</button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {isAdmin && (
        <form class="panel" onSubmit={(e) => { void save(e) }} aria-labelledby={`${kind}-form-title`}>
          <h2 id={`${kind}-form-title`}>{editing === undefined ? `New ${noun}` : `Edit ${noun} #${editing.id}`}</h2>
          <Field id={`${kind}-name`} label="Name">
            <input id={`${kind}-name`} required maxLength={128} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field id={`${kind}-description`} label="Description">
            <input id={`${kind}-description`} maxLength={128} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </Field>
          <ErrorBox error={saveError} />
          <button type="submit">{editing === undefined ? 'Create' : 'Save'}</button>
          {editing !== undefined && <button type="button" class="secondary" onClick={() => edit(undefined)}>Cancel</button>}
        </form>
      )}
    </section>
  )
}
