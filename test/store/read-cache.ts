import t from 'tap'
import type { Test } from 'tap'
import { UserRole, UserStatus } from '../../lib/core/users/user-ports.js'
import { openSqliteStore, sqliteDialect } from '../../lib/store/dialects/sqlite.js'
import type { KyselyStore } from '../../lib/store/kysely-store.js'
import { createKyselyStore } from '../../lib/store/kysely-store.js'
import { cachedRepository, createReadCache } from '../../lib/store/read-cache.js'

interface Rig {
  store: KyselyStore
  /** Advances the cache's clock. */
  advance(ms: number): void
  userId: number
  networkId: number
  deviceTypeId: number
}

/** A store whose cache runs on a manual clock, with one user, network, device type and device 'd1'. */
async function rig (t: Test): Promise<Rig> {
  const base = await openSqliteStore(':memory:')
  t.teardown(() => base.close())
  let time = 0
  const store = createKyselyStore(base.db, sqliteDialect, { readCache: { ttlMs: 1000, now: () => time } })
  const networkId = await store.networks.insert({ name: 'n1', description: null })
  const deviceTypeId = await store.deviceTypes.insert({ name: 'dt1', description: null })
  const userId = await store.users.insert({
    login: 'u1', passwordHash: 'x', role: UserRole.Client, status: UserStatus.Active, data: null, introReviewed: false, allDeviceTypesAvailable: false
  })
  await store.devices.insert({ id: 'd1', name: 'd1', data: null, networkId, deviceTypeId, isBlocked: false })
  await store.users.assignNetwork(userId, networkId)
  await store.users.assignDeviceType(userId, deviceTypeId)
  return { store, advance: (ms) => { time += ms }, userId, networkId, deviceTypeId }
}

/** Changes rows behind the repositories' back (as another instance would). */
async function changeBehind (r: Rig): Promise<void> {
  await r.store.db.updateTable('users').set({ status: UserStatus.Disabled }).execute()
  await r.store.db.updateTable('devices').set({ name: 'renamed' }).execute()
  await r.store.db.deleteFrom('user_networks').execute()
  await r.store.db.deleteFrom('user_device_types').execute()
}

async function readAll (r: Rig): Promise<unknown> {
  return {
    status: (await r.store.users.findById(r.userId))?.status,
    device: (await r.store.devices.findById('d1'))?.name,
    networks: await r.store.users.networkIds(r.userId),
    deviceTypes: await r.store.users.deviceTypeIds(r.userId)
  }
}

const fresh = { status: UserStatus.Active, device: 'd1', networks: [1], deviceTypes: [1] }
const changed = { status: UserStatus.Disabled, device: 'renamed', networks: [], deviceTypes: [] }

t.test('reads are served from the cache for at most the TTL', async (t) => {
  const r = await rig(t)
  t.same(await readAll(r), fresh)
  await changeBehind(r)
  r.advance(999)
  t.same(await readAll(r), fresh, 'a write by another process is not seen within the TTL')
  r.advance(1)
  t.same(await readAll(r), changed, 'it is seen once the TTL has passed')
})

t.test('a missing row is cached too, and an insert clears it', async (t) => {
  const r = await rig(t)
  t.equal(await r.store.devices.findById('d2'), undefined)
  await r.store.devices.insert({ id: 'd2', name: 'd2', data: null, networkId: r.networkId, deviceTypeId: r.deviceTypeId, isBlocked: false })
  t.equal((await r.store.devices.findById('d2'))?.name, 'd2')
})

// Each write clears everything cached, including rows the write did not touch itself.
const writes: Record<string, (r: Rig) => Promise<unknown>> = {
  'users.update': (r) => r.store.users.update(r.userId, { loginAttempts: 1 }),
  'users.insert': (r) => r.store.users.insert({ login: 'u2', passwordHash: 'x', role: UserRole.Client, status: UserStatus.Active, data: null, introReviewed: false, allDeviceTypesAvailable: false }),
  'users.assignNetwork': (r) => r.store.users.assignNetwork(r.userId, r.networkId),
  'users.unassignNetwork': (r) => r.store.users.unassignNetwork(r.userId, 999),
  'users.assignDeviceType': (r) => r.store.users.assignDeviceType(r.userId, r.deviceTypeId),
  'users.unassignDeviceType': (r) => r.store.users.unassignDeviceType(r.userId, 999),
  'users.unassignAllDeviceTypes': (r) => r.store.users.unassignAllDeviceTypes(999),
  'devices.update': (r) => r.store.devices.update('d1', { isBlocked: false }),
  'devices.delete': (r) => r.store.devices.delete('nope'),
  'networks.update': (r) => r.store.networks.update(r.networkId, { description: 'x' }),
  'networks.delete': (r) => r.store.networks.delete(999),
  'deviceTypes.update': (r) => r.store.deviceTypes.update(r.deviceTypeId, { description: 'x' }),
  'deviceTypes.delete': (r) => r.store.deviceTypes.delete(999)
}

for (const [name, write] of Object.entries(writes)) {
  t.test(`${name} clears the cache`, async (t) => {
    const r = await rig(t)
    t.same(await readAll(r), fresh)
    await changeBehind(r)
    await write(r)
    const after = await readAll(r) as typeof changed
    t.same({ status: after.status, device: after.device }, { status: changed.status, device: changed.device })
  })
}

t.test('the writes themselves are seen at once, cascades included', async (t) => {
  const r = await rig(t)
  t.same(await readAll(r), fresh)
  await r.store.users.update(r.userId, { status: UserStatus.LockedOut })
  t.equal((await r.store.users.findById(r.userId))?.status, UserStatus.LockedOut)
  await r.store.users.unassignNetwork(r.userId, r.networkId)
  t.same(await r.store.users.networkIds(r.userId), [])
  await r.store.users.unassignAllDeviceTypes(r.userId)
  t.same(await r.store.users.deviceTypeIds(r.userId), [])
  await r.store.users.assignNetwork(r.userId, r.networkId)
  await r.store.users.assignDeviceType(r.userId, r.deviceTypeId)
  t.same(await readAll(r), { ...fresh, status: UserStatus.LockedOut })
  await r.store.devices.update('d1', { name: 'd1b' })
  t.equal((await r.store.devices.findById('d1'))?.name, 'd1b')
  await r.store.networks.delete(r.networkId)
  t.equal(await r.store.devices.findById('d1'), undefined, 'the network delete cascaded to its device')
  t.same(await r.store.users.networkIds(r.userId), [], 'and to the assignment')
  t.same(await r.store.users.deviceTypeIds(r.userId), [r.deviceTypeId])
  await r.store.deviceTypes.delete(r.deviceTypeId)
  t.same(await r.store.users.deviceTypeIds(r.userId), [], 'the device type delete cascaded to the assignment')
  await r.store.users.delete(r.userId)
  t.equal(await r.store.users.findById(r.userId), undefined)
})

t.test('the device type delete cascades to its devices', async (t) => {
  const r = await rig(t)
  t.ok(await r.store.devices.findById('d1'))
  await r.store.deviceTypes.delete(r.deviceTypeId)
  t.equal(await r.store.devices.findById('d1'), undefined)
})

t.test('transactions: reads inside bypass the cache, writes clear it at commit, rollbacks leave nothing', async (t) => {
  const r = await rig(t)
  t.same(await readAll(r), fresh)
  await r.store.transaction(async (tx) => {
    await tx.devices.update('d1', { name: 'in-tx' })
    t.equal((await tx.devices.findById('d1'))?.name, 'in-tx')
  })
  t.equal((await r.store.devices.findById('d1'))?.name, 'in-tx')

  await t.rejects(r.store.transaction(async (tx) => {
    await tx.devices.update('d1', { name: 'rolled-back' })
    t.equal((await tx.devices.findById('d1'))?.name, 'rolled-back')
    throw new Error('roll back')
  }))
  t.equal((await r.store.devices.findById('d1'))?.name, 'in-tx', 'the rolled-back row was never cached')

})

t.test('a write in a transaction clears the cache again after the commit', async (t) => {
  // On PostgreSQL a read on another connection may cache the old row between the write and
  // its commit; here a plain repository and a hand-run commit stand in for that.
  const cache = createReadCache({ ttlMs: 1000 })
  let stored = 'old'
  const repository = cachedRepository({
    async find (id: string) { return `${id}:${stored}` },
    async write (value: string) { stored = value }
  }, cache, { cached: { find: 'x' } }, { afterCommit: undefined, written: async () => {} })
  const pending: Array<() => void> = []
  const inTx = cachedRepository({ async write (value: string) { stored = value } }, cache, {}, {
    afterCommit: (fn) => { pending.push(fn) }, written: async () => {}
  })
  t.equal(await repository.find('a'), 'a:old')
  await inTx.write('new')
  stored = 'old' // the transaction has not committed: another connection still reads the old row
  t.equal(await repository.find('a'), 'a:old')
  stored = 'new'
  t.equal(await repository.find('a'), 'a:old', 'cached')
  for (const fn of pending) fn()
  t.equal(await repository.find('a'), 'a:new', 'cleared at commit')
})

t.test('callers get copies: changing a returned record does not change the cache', async (t) => {
  const r = await rig(t)
  const user = await r.store.users.findById(r.userId)
  user!.status = UserStatus.Disabled
  const ids = await r.store.users.networkIds(r.userId)
  ids.push(42)
  t.equal((await r.store.users.findById(r.userId))?.status, UserStatus.Active)
  t.same(await r.store.users.networkIds(r.userId), [r.networkId])
})

t.test('the cache itself', async (t) => {
  let time = 0
  const cache = createReadCache({ ttlMs: 10, maxEntries: 2, now: () => time })
  let loads = 0
  const load = async (): Promise<number> => ++loads
  const [a, b] = await Promise.all([cache.get('a', load), cache.get('a', load)])
  t.same([a, b, loads], [1, 1, 1], 'concurrent misses share one read')
  await t.rejects(cache.get('f', () => Promise.reject(new Error('boom'))), /boom/)
  t.equal(await cache.get('f', load), 2, 'a failed read is not remembered')
  t.equal(await cache.get('c', load), 3)
  t.equal(await cache.get('a', load), 4, 'the cache was cleared when full')
  time = 10
  t.equal(await cache.get('a', load), 5, 'expired')
  cache.invalidate()
  t.equal(await cache.get('a', load), 6, 'invalidated')
  const off = createReadCache({ ttlMs: 0 })
  t.equal(off.enabled, false)
})

t.test('watchOwnWrites: each write of a cached repository is told, in its transaction; reads and messages are not', async (t) => {
  const r = await rig(t)
  const told: Array<{ inTransaction: boolean }> = []
  const off = r.store.watchOwnWrites(async (tx) => { told.push({ inTransaction: tx !== r.store }) })
  await r.store.devices.findById('d1')
  await r.store.users.findById(r.userId)
  await r.store.networks.list('all', {})
  t.equal(told.length, 0, 'reads are not writes')
  await r.store.commands.insert({
    command: 'c', deviceId: 'd1', networkId: r.networkId, deviceTypeId: r.deviceTypeId, userId: null,
    parameters: null, lifetime: null, status: null, result: null
  }, Date.now())
  t.equal(told.length, 0, 'a message write changes no cached row')
  await r.store.devices.update('d1', { name: 'renamed' })
  t.same(told, [{ inTransaction: false }], 'a write outside a transaction is told after it, on the store itself')
  await r.store.transaction(async (tx) => {
    await tx.networks.update(r.networkId, { description: 'd' })
    await tx.users.update(r.userId, { data: { a: 1 } })
  })
  t.same(told.slice(1), [{ inTransaction: true }, { inTransaction: true }], 'writes in a transaction are told there, one each')
  off()
  await r.store.deviceTypes.update(r.deviceTypeId, { description: 'x' })
  t.equal(told.length, 3, 'off() stops it')
})

t.test('watchOwnWrites: a listener that fails in a transaction fails the write; outside one it is ignored', async (t) => {
  const r = await rig(t)
  r.store.watchOwnWrites(async () => { throw new Error('bus down') })
  await t.rejects(r.store.transaction((tx) => tx.devices.update('d1', { name: 'rolled-back' })), /bus down/)
  t.equal((await r.store.devices.findById('d1'))?.name, 'd1', 'the transaction rolled back')
  t.equal(await r.store.devices.update('d1', { name: 'kept' }), true, 'committed: the caller hears of the write, not of the listener')
  t.equal((await r.store.devices.findById('d1'))?.name, 'kept')
})
