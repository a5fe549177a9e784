/** Devices in scope: search by name, sort, filter by presence; online dot and last seen. */
import { useEffect, useMemo, useState } from 'preact/hooks'
import type { Api, Device, Named } from '../api.js'
import { ErrorBox, OnlineDot, When, useLoad } from '../ui.js'

type Sort = 'name' | 'network' | 'type' | 'lastSeen' | 'online'

export function DevicesPage ({ api }: { api: Api }) {
  const [search, setSearch] = useState('')
  const [presence, setPresence] = useState<'' | 'true' | 'false'>('')
  const [sort, setSort] = useState<Sort>('name')
  const [descending, setDescending] = useState(false)
  const query = new URLSearchParams({ take: '1000' })
  if (search.trim() !== '') query.set('namePattern', `%${search.trim()}%`)
  if (presence !== '') query.set('online', presence)
  const devices = useLoad(() => api.request<Device[]>('GET', `/device?${query.toString()}`), [search, presence])
  const networks = useLoad(() => api.request<Named[]>('GET', '/network'), [])
  const types = useLoad(() => api.request<Named[]>('GET', '/devicetype'), [])

  // Presence changes on its own: refresh every 10 s.
  useEffect(() => {
    const timer = setInterval(devices.reload, 10_000)
    return () => clearInterval(timer)
  }, [devices.reload])

  const networkName = (id: number): string => networks.data?.find((n) => n.id === id)?.name ?? `#${id}`
  const typeName = (id: number): string => types.data?.find((n) => n.id === id)?.name ?? `#${id}`
  const rows = useMemo(() => {
    const key = (d: Device): string => {
      switch (sort) {
        case 'network': return networkName(d.networkId).toLowerCase()
        case 'type': return typeName(d.deviceTypeId).toLowerCase()
        case 'lastSeen': return d.lastSeen ?? ''
        case 'online': return d.online ? '1' : '0'
        default: return d.name.toLowerCase()
      }
    }
    const sorted = [...(devices.data ?? [])].sort((a, b) => key(a).localeCompare(key(b)) || a.id.localeCompare(b.id))
    return descending ? sorted.reverse() : sorted
  }, [devices.data, sort, descending, networks.data, types.data])

  const header = (column: Sort, label: string) => (
    <th scope="col" aria-sort={sort === column ? (descending ? 'descending' : 'ascending') : undefined}>
      <button type="button" class="link" onClick={() => { if (sort === column) setDescending(!descending); else { setSort(column); setDescending(false) } }}>
        {label}{sort === column ? (descending ? ' ▼' : ' ▲') : ''}
      </button>
    </th>
  )

  return (
    <section aria-labelledby="devices-title">
      <h1 id="devices-title">Devices</h1>
      <form class="toolbar" role="search" onSubmit={(e) => e.preventDefault()}>
        <label for="device-search">Search by name</label>
        <input id="device-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} placeholder="e.g. sensor" />
        <label for="device-presence">Presence</label>
        <select id="device-presence" value={presence} onChange={(e) => setPresence(e.currentTarget.value as '' | 'true' | 'false')}>
          <option value="">All</option>
          <option value="true">Online</option>
          <option value="false">Offline</option>
        </select>
        <button type="button" class="secondary" onClick={devices.reload}>Refresh</button>
      </form>
      <ErrorBox error={devices.error ?? networks.error ?? types.error} />
      {devices.data !== undefined && (
        <table class="list" aria-describedby="devices-count">
          <caption id="devices-count">{rows.length} device{rows.length === 1 ? '' : 's'}</caption>
          <thead>
            <tr>{header('online', 'Status')}{header('name', 'Name')}<th scope="col">Id</th>{header('network', 'Network')}{header('type', 'Type')}{header('lastSeen', 'Last seen')}</tr>
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
      {devices.data?.length === 0 && <p>No devices match.</p>}
    </section>
  )
}
