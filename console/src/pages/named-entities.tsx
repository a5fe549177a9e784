/** Networks and device types: the same shape and rules, one page (create, rename, delete for admins). */
import { useState } from 'preact/hooks'
import type { Api, Named } from '../api.js'
import { useConfirm } from '../confirm-dialog.js'
import { devicesIn, devicesText } from '../device-count.js'
import { FeedbackBox, useFeedback } from '../feedback.js'
import { Pager, usePagedList } from '../pagination.js'
import { ErrorBox, Field } from '../ui.js'

const TITLES = { network: ['Networks', 'network'], devicetype: ['Device types', 'device type'] } as const

export function NamedEntitiesPage ({ api, kind, isAdmin }: { api: Api, kind: 'network' | 'devicetype', isAdmin: boolean }) {
  const [title, noun] = TITLES[kind]
  const list = usePagedList<Named>(api, `/${kind}`, {}, { sortField: 'name' })
  const [editing, setEditing] = useState<Named | undefined>(undefined)
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const feedback = useFeedback()
  const [dialog, ask] = useConfirm()

  function edit (entity: Named | undefined): void {
    setEditing(entity)
    setName(entity?.name ?? '')
    setDescription(entity?.description ?? '')
    document.getElementById(`${kind}-name`)?.focus()
  }

  async function save (event: Event): Promise<void> {
    event.preventDefault()
    const body = { name: name.trim(), description: description.trim() === '' ? null : description.trim() }
    const creating = editing === undefined
    const saved = await feedback.run(async () => {
      if (creating) await api.request('POST', `/${kind}`, body)
      else await api.request('PUT', `/${kind}/${editing.id}`, body)
      return true
    }, creating ? `Created ${noun} ${body.name}.` : `Saved ${noun} ${body.name}.`)
    if (saved === true) {
      edit(undefined)
      list.reload()
    }
  }

  /** Asks with the real consequence: an empty one is deleted plainly, one with devices only with them (force). */
  async function remove (entity: Named): Promise<void> {
    const count = await feedback.run(() => devicesIn(api, kind, entity.id))
    if (count === undefined) return
    const yes = await ask(count === 0
      ? { title: `Delete ${noun} "${entity.name}"?`, body: <p>It holds no devices.</p>, confirm: `Delete ${noun}`, danger: true }
      : {
          title: `Delete ${noun} "${entity.name}"?`,
          body: <p>It holds {devicesText(count)}. Deleting the {noun} deletes {count === 1 ? 'that device' : 'those devices'} too, with their notifications and commands.</p>,
          confirm: `Delete ${noun} and its ${devicesText(count)}`,
          danger: true
        })
    if (!yes) return
    const deleted = await feedback.run(async () => {
      await api.request('DELETE', `/${kind}/${entity.id}${count === 0 ? '' : '?force=true'}`)
      return true
    }, count === 0 ? `Deleted ${noun} ${entity.name}.` : `Deleted ${noun} ${entity.name} and its ${devicesText(count)}.`)
    if (deleted === true) list.reload()
  }

  return (
    <section aria-labelledby={`${kind}-title`}>
      <h1 id={`${kind}-title`}>{title}</h1>
      <ErrorBox error={list.error} />
      <FeedbackBox feedback={feedback} />
      {dialog}
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
          <button type="submit">{editing === undefined ? 'Create' : 'Save'}</button>
          {editing !== undefined && <button type="button" class="secondary" onClick={() => edit(undefined)}>Cancel</button>}
        </form>
      )}
    </section>
  )
}
