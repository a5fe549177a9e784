/**
 * Devices in scope, a page at a time: search by name or id (any case), filter by presence,
 * sort on the server; online dot and last seen. The search, filters, sort and page live in the
 * hash, so a reload keeps them.
 */
import { useEffect, useState } from 'preact/hooks'
import type { Api, Device, Named } from '../api.js'
import { Pager, useDebounced, useHashQuery, usePagedList } from '../pagination.js'
import { ErrorBox, OnlineDot, When, useLoad } from '../ui.js'

/** Columns the API sorts by (`sortField`); status and last seen are not among them. */
type Sort = 'name' | 'network' | 'devicetype'

export function DevicesPage ({ api }: { api: Api }) {
  const [query, update] = useHashQuery()
  const search = query.get('q') ?? ''
  const presence = (query.get('online') ?? '') as '' | 'true' | 'false'
  const sort = (['name', 'network', 'devicetype'].includes(query.get('sort') ?? '') ? query.get('sort') : 'name') as Sort
  const descending = query.get('order') === 'desc'

  // What is typed goes to the hash (and the API) once typing pauses, or at once with any other change.
  const [typed, setTyped] = useState(search)
  const settled = useDebounced(typed, 300)
  useEffect(() => { if (settled.trim() !== search.trim()) update({ q: settled.trim(), page: undefined }) }, [settled])
  useEffect(() => { if (search.trim() !== typed.trim()) setTyped(search) }, [search])

  const devices = usePagedList<Device>(api, '/device', { search, online: presence }, { sortField: sort, sortOrder: descending ? 'DESC' : 'ASC' })
  const networks = useLoad(() => api.request<Named[]>('GET', '/network'), [])
  const types = useLoad(() => api.request<Named[]>('GET', '/devicetype'), [])

  // Presence changes on its own: refresh every 10 s.
  useEffect(() => {
    const timer = setInterval(devices.reload, 10_000)
    return () => clearInterval(timer)
  }, [devices.reload])

  const networkName = (id: number): string => networks.data?.find((n) => n.id === id)?.name ?? `#${id}`
  const typeName = (id: number): string => types.data?.find((n) => n.id === id)?.name ?? `#${id}`
  const rows = devices.data ?? []

  const header = (column: Sort, label: string) => (
    <th scope="col" aria-sort={sort === column ? (descending ? 'descending' : 'ascending') : undefined}>
      <button type="button" class="link" onClick={() => update({
        sort: column === 'name' ? undefined : column, order: sort === column && !descending ? 'desc' : undefined, q: typed.trim(), page: undefined
      })}>
        {label}{sort === column ? (descending ? ' ▼' : ' ▲') : ''}
      </button>
    </th>
  )

  return (
    <section aria-labelledby="devices-title">
      <h1 id="devices-title">Devices</h1>
      <form class="toolbar" role="search" onSubmit={(e) => { e.preventDefault(); update({ q: typed.trim(), page: undefined }) }}>
        <label for="device-search">Search by name or id</label>
        <input id="device-search" type="search" maxLength={128} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} placeholder="e.g. therm" />
        <label for="device-presence">Presence</label>
        <select id="device-presence" value={presence} onChange={(e) => update({ online: e.currentTarget.value, q: typed.trim(), page: undefined })}>
          <option value="">All</option>
          <option value="true">Online</option>
          <option value="false">Offline</option>
        </select>
        <button type="button" class="secondary" onClick={devices.reload}>Refresh</button>
      </form>
      <ErrorBox error={devices.error ?? networks.error ?? types.error} />
      <Pager list={devices} noun="device" />
      {devices.data !== undefined && rows.length > 0 && (
        <table class="list" aria-describedby="pager-range">
          <caption class="visually-hidden">Devices</caption>
          <thead>
            <tr><th scope="col">Status</th>{header('name', 'Name')}<th scope="col">Id</th>{header('network', 'Network')}{header('devicetype', 'Type')}<th scope="col">Last seen</th></tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id}>
                <td><OnlineDot online={d.online} /></td>
                <td><a href={`#/device/${encodeURIComponent(d.id)}`}>{d.name}</a>{d.isBlocked && <span class="tag">blocked</span>}</td>
                <td><code>{d.id}</code></td>
                <td>{networkName(d.networkId)}</td>
                <td>{typeName(d.deviceTypeId)}</td>
                <td><When value={d.lastSeen} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {devices.total === 0 && <p>{search !== '' || presence !== '' ? 'No devices match.' : 'No devices yet.'}</p>}
    </section>
  )
}
