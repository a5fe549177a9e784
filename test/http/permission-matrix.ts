/**
 * Every registry endpoint against four kinds of caller: an admin, a client with one network,
 * a client whose token narrows its networks (and one that narrows device types), and a caller
 * with no rights. Each caller gets its own app, so deletes do not disturb the others. Lists and
 * counts must hold exactly the rows in scope, and no row outside the scope may show up in any
 * answer, error messages included. Named targets follow D7 (auth spec §4.2, §4.4): 403 when the
 * token does not grant the id (existing or not), 404 when it does but the row is missing or
 * outside the data scope; device registration follows the user's own assignments.
 */
import t from 'tap'
import { createTestApp } from '../fixtures/app.js'
import type { TestContext } from '../fixtures/store.js'
import type { TestApp } from '../fixtures/app.js'
import { registry } from '../fixtures/registry.js'

interface World {
  h: TestApp
  users: { target: number }
}

/** Networks 1 Sample, 2 Net A, 3 Net B; types 1 Default, 2 Type X; devices in each. */
async function world (t: TestContext): Promise<World> {
  const h = await createTestApp(t)
  const r = registry(h)
  await r.network('Net A')
  await r.network('Net B')
  await r.deviceType('Type X')
  await r.device('s-1', { networkId: 1, deviceTypeId: 1 })
  await r.device('a-1', { networkId: 2, deviceTypeId: 1 })
  await r.device('a-2', { networkId: 2, deviceTypeId: 2 })
  await r.device('b-1', { networkId: 3, deviceTypeId: 1 })
  const target = await h.createUser({ login: 'target-user' })
  await h.store.users.assignNetwork(1, 3)
  return { h, users: { target: target.user.id } }
}

interface Expectation {
  /** Builds the caller's token inside its own world. */
  token: (w: World) => Promise<{ token: string, self?: number }>
  networks: number[] | 'denied'
  deviceTypes: number[] | 'denied'
  devices: string[] | 'denied'
  /** What the token itself names (§4.1): ids outside it answer 403 whether or not they exist. */
  networkGrant: number[] | 'all'
  deviceTypeGrant: number[] | 'all'
  /** Devices PUT /device/{id} may update: those in the user's own networks (D7). */
  registrable: string[]
  manageNetwork: boolean
  manageDeviceType: boolean
  registerDevice: boolean
  manageUser: 'all' | 'self' | 'denied'
  /** Strings that must never appear in any answer to this caller. */
  hidden: string[]
}

const ALL_NETWORKS = [1, 2, 3]
const ALL_TYPES = [1, 2]
const ALL_DEVICES = ['s-1', 'a-1', 'a-2', 'b-1']
const DEVICE_AT: Record<string, [number, number]> = { 's-1': [1, 1], 'a-1': [2, 1], 'a-2': [2, 2], 'b-1': [3, 1] }
const NETWORK_NAMES: Record<number, string> = { 1: 'Sample Network', 2: 'Net A', 3: 'Net B' }
const TYPE_NAMES: Record<number, string> = { 1: 'Default Device Type', 2: 'Type X' }

const callers: Record<string, Expectation> = {
  admin: {
    token: async (w) => ({ token: w.h.adminToken, self: 1 }),
    networks: ALL_NETWORKS,
    deviceTypes: ALL_TYPES,
    devices: ALL_DEVICES,
    networkGrant: 'all',
    deviceTypeGrant: 'all',
    registrable: ALL_DEVICES,
    manageNetwork: true,
    manageDeviceType: true,
    registerDevice: true,
    manageUser: 'all',
    hidden: []
  },
  'client with one network': {
    token: async (w) => {
      const c = await w.h.createUser({ networkIds: [2] })
      return { token: c.accessToken, self: c.user.id }
    },
    networks: [2],
    deviceTypes: ALL_TYPES,
    devices: ['a-1', 'a-2'],
    networkGrant: [2],
    deviceTypeGrant: 'all',
    registrable: ['a-1', 'a-2'],
    manageNetwork: false,
    manageDeviceType: false,
    registerDevice: true,
    manageUser: 'denied',
    hidden: ['Sample Network', 'Net B', 's-1', 'b-1']
  },
  'client with a token narrowed to network 2': {
    token: async (w) => {
      const c = await w.h.createUser({ networkIds: [2, 3] })
      return { token: w.h.sign({ u: c.user.id, a: [0], n: ['2'], dt: ['*'], e: Date.now() + 60_000, t: 1 }), self: c.user.id }
    },
    networks: [2],
    deviceTypes: ALL_TYPES,
    devices: ['a-1', 'a-2'],
    networkGrant: [2],
    deviceTypeGrant: 'all',
    // The user is assigned to networks 2 and 3: registration ignores the token's n (D7).
    registrable: ['a-1', 'a-2', 'b-1'],
    manageNetwork: true,
    manageDeviceType: true,
    registerDevice: true,
    manageUser: 'self',
    hidden: ['Sample Network', 'Net B', 's-1', 'b-1']
  },
  'client with a token narrowed to device type 1': {
    token: async (w) => {
      const c = await w.h.createUser({ networkIds: [2, 3], allDeviceTypesAvailable: false, deviceTypeIds: [1, 2] })
      return { token: w.h.sign({ u: c.user.id, a: [0], n: ['*'], dt: ['1'], e: Date.now() + 60_000, t: 1 }), self: c.user.id }
    },
    networks: [2, 3],
    deviceTypes: [1],
    devices: ['a-1', 'b-1'],
    networkGrant: 'all',
    deviceTypeGrant: [1],
    registrable: ['a-1', 'a-2', 'b-1'],
    manageNetwork: true,
    manageDeviceType: true,
    registerDevice: true,
    manageUser: 'self',
    hidden: ['Sample Network', 'Type X', 's-1', 'a-2']
  },
  'client with no rights': {
    token: async (w) => {
      const c = await w.h.createUser({ networkIds: [1, 2, 3] })
      return { token: w.h.sign({ u: c.user.id, a: null, n: ['*'], dt: ['*'], e: Date.now() + 60_000, t: 1 }), self: c.user.id }
    },
    networks: 'denied',
    deviceTypes: 'denied',
    devices: 'denied',
    networkGrant: 'all',
    deviceTypeGrant: 'all',
    registrable: [],
    manageNetwork: false,
    manageDeviceType: false,
    registerDevice: false,
    manageUser: 'denied',
    hidden: ['Sample Network', 'Net A', 'Net B', 'Type X', 's-1', 'a-1', 'a-2', 'b-1']
  }
}

const DENIED = { error: 403, message: 'Access is denied' }

for (const [name, x] of Object.entries(callers)) {
  t.test(name, async (t) => {
    const w = await world(t)
    const { h } = w
    const { token, self } = await x.token(w)
    const texts: string[] = []
    const call = async (method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> => { // eslint-disable-line @typescript-eslint/no-explicit-any
      const res = await h.request(method, path, { token, body })
      texts.push(`${method} ${path} -> ${res.text}`)
      t.not(res.status, 500, `${method} ${path} never 500`)
      return res
    }
    const denied = async (method: string, path: string, body?: unknown): Promise<void> => {
      const res = await call(method, path, body)
      t.same([res.status, res.body], [403, DENIED], `${method} ${path} denied`)
    }
    const visibleNetworks = x.networks === 'denied' ? [] : x.networks
    const visibleTypes = x.deviceTypes === 'denied' ? [] : x.deviceTypes
    const visibleDevices = x.devices === 'denied' ? [] : x.devices
    const fullScope = x.networkGrant === 'all' && x.deviceTypeGrant === 'all'
    const granted = (grant: number[] | 'all', id: number): boolean => grant === 'all' || grant.includes(id)
    /** The answer for a named network / device type the caller cannot see (D7). */
    const unseen = (grant: number[] | 'all', id: number, notFound: string): [number, unknown] =>
      granted(grant, id) ? [404, { error: 404, message: notFound }] : [403, DENIED]

    // Lists and counts hold exactly the rows in scope.
    const lists: Array<[string, number[] | string[] | 'denied', string]> = [
      ['/network', x.networks, 'id'], ['/devicetype', x.deviceTypes, 'id'], ['/device', x.devices, 'id']
    ]
    for (const [path, expected] of lists) {
      if (expected === 'denied') {
        await denied('GET', path)
        await denied('GET', `${path}/count`)
        continue
      }
      const list = await call('GET', path)
      t.same(list.body.map((row: { id: unknown }) => row.id), expected, `GET ${path}`)
      t.same((await call('GET', `${path}/count`)).body, { count: expected.length }, `GET ${path}/count`)
      t.same((await call('GET', `${path}?take=1&skip=0&sortField=name`)).body.length, Math.min(1, expected.length))
    }
    if (x.devices !== 'denied') {
      t.same((await call('GET', '/device?networkId=3')).body.map((d: { id: string }) => d.id), visibleDevices.filter((id) => DEVICE_AT[id]![0] === 3), 'a network filter cannot widen the scope')
      t.same((await call('GET', '/device/count?networkName=Net%20B')).body.count, visibleDevices.filter((id) => DEVICE_AT[id]![0] === 3).length)
      t.same((await call('GET', '/device?deviceTypeName=Type%20X')).body.map((d: { id: string }) => d.id), visibleDevices.filter((id) => DEVICE_AT[id]![1] === 2))
    }

    // Reads by id: 200 in scope; otherwise 403 when the token does not grant the id, else 404 (D7).
    for (const id of [...ALL_NETWORKS, 999999, 0]) {
      if (x.networks === 'denied') { await denied('GET', `/network/${id}`); continue }
      const res = await call('GET', `/network/${id}`)
      if (visibleNetworks.includes(id)) {
        t.same(res.status, 200, `GET /network/${id}`)
        t.same(res.body.devices.map((d: { id: string }) => d.id), visibleDevices.filter((d) => DEVICE_AT[d]![0] === id), `devices of network ${id}`)
        t.equal(res.body.name, NETWORK_NAMES[id])
      } else {
        t.same([res.status, res.body], unseen(x.networkGrant, id, `Network with id = ${id} not found`), `GET /network/${id}`)
      }
    }
    for (const id of [...ALL_TYPES, 999999]) {
      if (x.deviceTypes === 'denied') { await denied('GET', `/devicetype/${id}`); continue }
      const res = await call('GET', `/devicetype/${id}`)
      if (visibleTypes.includes(id)) {
        t.same(res.status, 200, `GET /devicetype/${id}`)
        t.same(res.body.devices.map((d: { id: string }) => d.id), visibleDevices.filter((d) => DEVICE_AT[d]![1] === id), `devices of type ${id}`)
        t.equal(res.body.name, TYPE_NAMES[id])
      } else {
        t.same([res.status, res.body], unseen(x.deviceTypeGrant, id, `Device type with id = ${id} not found`), `GET /devicetype/${id}`)
      }
    }
    for (const id of [...ALL_DEVICES, 'nope']) {
      if (x.devices === 'denied') { await denied('GET', `/device/${id}`); continue }
      const res = await call('GET', `/device/${id}`)
      if (visibleDevices.includes(id)) t.same([res.status, res.body.id], [200, id], `GET /device/${id}`)
      else if (fullScope) t.same([res.status, res.body], [404, { error: 404, message: `Device with such deviceId = ${id} not found` }], `GET /device/${id}`)
      else t.same([res.status, res.body], [403, DENIED], `GET /device/${id} (restricted: 403, existing or not)`)
    }

    // Users.
    const target = w.users.target
    if (x.manageUser === 'denied') {
      for (const [method, path] of [['GET', '/user'], ['GET', '/user/count'], ['GET', `/user/${target}`], ['POST', '/user'], ['PUT', `/user/${target}`], ['DELETE', `/user/${target}`]]) {
        await denied(method!, path!, method === 'GET' || method === 'DELETE' ? undefined : { data: null })
      }
    } else {
      const list = await call('GET', '/user')
      const count = (await call('GET', '/user/count')).body.count
      if (x.manageUser === 'all') t.ok(list.status === 200 && list.body.length >= 2 && count >= 2, 'every user')
      else t.same([list.status, list.body.map((u: { id: number }) => u.id), count], [200, [self], 1], 'only its own account')
      const other = await call('GET', `/user/${target}`)
      if (x.manageUser === 'all') t.equal(other.status, 200)
      else t.same([other.status, other.body], [403, { error: 403, message: `User with id = ${target} not found` }])
      t.equal((await call('GET', `/user/${self}`)).status, 200, 'own record')
    }
    if (x.networks === 'denied') {
      await denied('GET', '/user/current')
    } else {
      const current = await call('GET', '/user/current')
      t.equal(current.status, 200)
      t.ok(current.body.networks.every((n: { id: number }) => visibleNetworks.includes(n.id)), 'the user\'s networks are limited to the scope')
    }

    // Links: reads of networks / types outside the scope are 404 like missing ones.
    if (x.networks !== 'denied') {
      const res = await call('GET', `/user/1/network/3`)
      // #16: one rule for /user/{id}...: only an admin acts on another user (the same 403 whatever exists).
      if (x.manageUser !== 'all' && self !== 1) t.same([res.status, res.body], [403, { error: 403, message: 'User with id = 1 not found' }])
      else if (visibleNetworks.includes(3)) t.same(res.status, 200)
      else t.same([res.status, res.body], [404, { error: 404, message: 'Network with id 3 for user with id 1 was not found' }])
    }

    // Writes.
    const manageCases: Array<[boolean, 'network' | 'devicetype', number[], number[], number[] | 'all']> = [
      [x.manageNetwork, 'network', ALL_NETWORKS, visibleNetworks, x.networkGrant],
      [x.manageDeviceType, 'devicetype', ALL_TYPES, visibleTypes, x.deviceTypeGrant]
    ]
    for (const [allowed, kind, all, visible, grant] of manageCases) {
      if (!allowed) {
        await denied('POST', `/${kind}`, { name: `new ${kind}` })
        for (const id of all) {
          await denied('PUT', `/${kind}/${id}`, { description: 'changed' })
          await denied('DELETE', `/${kind}/${id}?force=true`)
        }
        continue
      }
      t.equal((await call('POST', `/${kind}`, { name: `new ${kind}` })).status, 201, `POST /${kind}`)
      for (const id of all) {
        const res = await call('PUT', `/${kind}/${id}`, { description: 'changed' })
        if (visible.includes(id)) t.equal(res.status, 204, `PUT /${kind}/${id}`)
        else t.same(res.status, granted(grant, id) ? 404 : 403, `PUT /${kind}/${id} out of scope`)
      }
      for (const id of [...all, 999999]) {
        if (visible.includes(id)) continue
        t.same((await call('PUT', `/${kind}/${id}`, { description: 'changed' })).status, granted(grant, id) ? 404 : 403, `PUT /${kind}/${id}`)
        t.same((await call('DELETE', `/${kind}/${id}?force=true`)).status, granted(grant, id) ? 404 : 403, `DELETE /${kind}/${id} out of scope`)
        if (id === 999999) continue
        t.ok(kind === 'network' ? await h.store.networks.findById(id) : await h.store.deviceTypes.findById(id), 'still there')
      }
    }

    // Devices: updates follow the user's own networks (D7); deletes are device-scoped: 403 or 404.
    for (const id of ALL_DEVICES) {
      if (!x.registerDevice) {
        await denied('PUT', `/device/${id}`, { name: 'changed' })
        await denied('DELETE', `/device/${id}`)
        continue
      }
      const res = await call('PUT', `/device/${id}`, { name: 'changed' })
      if (x.registrable.includes(id)) t.equal(res.status, 204, `PUT /device/${id}`)
      else t.same([res.status, res.body], [403, { error: 403, message: 'No access to device' }], `PUT /device/${id} out of scope`)
    }
    for (const id of [...ALL_DEVICES, 'nope']) {
      if (!x.registerDevice) continue
      const res = await call('DELETE', `/device/${id}`)
      if (visibleDevices.includes(id)) t.equal(res.status, 204, `DELETE /device/${id}`)
      else if (fullScope) t.same([res.status, res.body], [404, { error: 404, message: `Device with such deviceId = ${id} not found` }], `DELETE /device/${id}`)
      else t.same([res.status, res.body], [403, DENIED], `DELETE /device/${id}`)
    }
    const remaining = (await h.request('GET', '/device')).body.map((d: { id: string, name: string }) => [d.id, d.name])
    const expectedRemaining = ALL_DEVICES.filter((id) => !visibleDevices.includes(id))
      .map((id) => [id, x.registerDevice && x.registrable.includes(id) ? 'changed' : id])
    t.same(remaining, expectedRemaining, 'devices outside the scope are not deleted, and renamed only within the user\'s networks')

    // Forced deletes in scope cascade to the network's devices.
    if (x.manageNetwork) {
      for (const id of visibleNetworks) t.equal((await call('DELETE', `/network/${id}?force=true`)).status, 204, `DELETE /network/${id}`)
    }

    for (const secret of x.hidden) {
      // A not-found message may echo the id the caller itself sent; anything else is a leak.
      const leak = texts.find((text) => {
        const [request, answer] = text.split(' -> ')
        return answer?.includes(secret) === true && request?.includes(secret) !== true
      })
      t.equal(leak, undefined, `"${secret}" never shows up`)
    }
  })
}
