/** Which device a REST request is about: `/device/{id}/...`, or `?deviceId=` on the poll-many routes. */
const DEVICE_PATH = /\/device\/([^/?]+)/
const NOT_AN_ID = new Set(['command', 'notification', 'count'])

export function deviceOfRequest (url: string): string | undefined {
  const match = DEVICE_PATH.exec(url)
  if (match !== null) {
    try {
      const id = decodeURIComponent(match[1]!)
      if (!NOT_AN_ID.has(id)) return id
    } catch {
      return undefined
    }
  }
  const query = url.indexOf('?')
  return query === -1 ? undefined : new URLSearchParams(url.slice(query + 1)).get('deviceId') ?? undefined
}
