/** How many devices a network or device type holds, as the signed-in user sees them. */
import type { Api } from './api.js'

/** Networks: `GET /device/count?networkId=`; device types: the devices of `GET /devicetype/{id}` (no count filter exists for them). */
export async function devicesIn (api: Api, kind: 'network' | 'devicetype', id: number): Promise<number> {
  if (kind === 'network') return (await api.request<{ count: number }>('GET', `/device/count?networkId=${id}`)).count
  return (await api.request<{ devices?: unknown[] }>('GET', `/devicetype/${id}`)).devices?.length ?? 0
}

/** "1 device", "3 devices". */
export function devicesText (count: number): string {
  return count === 1 ? '1 device' : `${count} devices`
}
