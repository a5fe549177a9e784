/**
 * The store contract: what every `Store` must do, whatever its database, as named checks that
 * need no test framework (each throws, through node:assert, on failure). A third-party store runs
 * them with any runner; devicehub runs them on SQLite and PostgreSQL (test/store/).
 *
 * @example
 * import { storeContract } from 'devicehub/testing'
 * for (const [name, check] of Object.entries(storeContract)) {
 *   test(name, async () => {
 *     const store = await openMyStore()
 *     try { await check({ store }) } finally { await store.close() }
 *   })
 * }
 */
import assert from 'node:assert/strict'
import { DeviceHubError, Messages } from '../../core/errors.js'
import type { JsonObject, Store } from '../../core/ports.js'
import { FULL_SCOPE } from '../../core/ports.js'
import type { UserRecord } from '../../core/users/user-ports.js'
import type { DrawLink } from '../../core/realtime/bus.js'
import type { LogCursor } from '../../core/realtime/log-cursor.js'
import { LOG_ORIGIN } from '../../core/realtime/log-cursor.js'
import type { MessageSelector } from '../../core/realtime/message-filter.js'
import type { NewCommand } from '../../core/realtime/message-records.js'
import type { KyselyStore } from '../../store/kysely-store.js'

/** What each check gets: a fresh, migrated, empty store of its own (the runner closes it). */
export interface StoreContractSubject {
  store: Store
  /**
   * For stores kept in files or servers: closes `store` and opens the same database again
   * (the runner then closes the store it returns). Without it the durability check passes
   * trivially (an in-memory store has nothing to reopen).
   */
  reopen?: () => Promise<Store>
}

/** One named check: resolves when the store behaves, rejects (an AssertionError) when not. */
export type StoreContractCheck = (subject: StoreContractSubject) => Promise<void>

/** Beyond 2^31: catches int8 columns read back as strings or truncated. */
const LATE = 1_700_000_000_123

function newUser (
  login: string, fields: Partial<Omit<UserRecord, 'id' | 'login'>> = {}
): Omit<UserRecord, 'id' | 'loginAttempts' | 'lastLogin' | 'tokenVersion'> {
  return {
    login,
    passwordHash: `hash-of-${login}`,
    role: fields.role ?? 1,
    status: fields.status ?? 0,
    data: fields.data ?? null,
    introReviewed: fields.introReviewed ?? false,
    allDeviceTypesAvailable: fields.allDeviceTypesAvailable ?? true
  }
}

async function rejectsConflict (promise: Promise<unknown>, what: string): Promise<void> {
  const error = await promise.then(() => undefined, (rejection: unknown) => rejection ?? new Error('rejected with nothing'))
  assert.ok(error !== undefined, `${what}: expected CONFLICT, resolved`)
  assert.ok(error instanceof DeviceHubError, `${what}: a DeviceHubError`)
  assert.equal(error.code, 'CONFLICT', `${what}: code CONFLICT`)
  assert.equal(error.message, Messages.conflict, `${what}: the contract's message`)
}

/** Deep equality of plain data (rows, arrays): key order and prototypes aside. */
function same (actual: unknown, expected: unknown, message?: string): void {
  assert.deepEqual(plain(actual), plain(expected), message)
}

function plain (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, plain(v)]))
  }
  return value
}

/** `actual` has at least the fields of `pattern` (recursively; a RegExp matches a string). */
function match (actual: unknown, pattern: unknown, message?: string): void {
  const fits = (value: unknown, want: unknown): boolean => {
    if (want instanceof RegExp) return typeof value === 'string' && want.test(value)
    if (Array.isArray(want)) return Array.isArray(value) && value.length === want.length && want.every((w, i) => fits(value[i], w))
    if (want !== null && typeof want === 'object') {
      if (value === null || typeof value !== 'object') return false
      return Object.entries(want).every(([k, w]) => fits((value as Record<string, unknown>)[k], w))
    }
    return Object.is(value, want)
  }
  if (!fits(actual, pattern)) assert.fail(`${message ?? 'match'}: ${JSON.stringify(actual)} does not match ${JSON.stringify(pattern)}`)
}

/** The raw Kysely handle when the store is a Kysely store (to check columns no port exposes). */
function kysely (store: Store): KyselyStore['db'] | undefined {
  return 'db' in store ? (store as KyselyStore).db : undefined
}

type Register = (name: string, fn: StoreContractCheck) => void

function userChecks (check: Register): void {
  check('dialect is named', async ({ store }) => {
    assert.ok(store.dialect === 'sqlite' || store.dialect === 'postgres')
  })

  check('users: insert, find, update, delete', async ({ store }) => {
    const data = { zeta: 1, alpha: { y: true, b: [3, 1] }, mid: 'x' }
    const id = await store.users.insert(newUser('alice', { role: 0, data, introReviewed: true, allDeviceTypesAvailable: false }))
    assert.equal(typeof id, 'number')
    const expected: UserRecord = {
      id,
      login: 'alice',
      passwordHash: 'hash-of-alice',
      role: 0,
      status: 0,
      loginAttempts: 0,
      lastLogin: null,
      data,
      introReviewed: true,
      allDeviceTypesAvailable: false,
      tokenVersion: 0
    }
    same(await store.users.findById(id), expected)
    same(await store.users.findByLogin('alice'), expected)
    assert.equal(JSON.stringify((await store.users.findById(id))!.data), JSON.stringify(data), 'JSON key order kept')
    assert.equal(await store.users.findById(id + 1000), undefined)
    assert.equal(await store.users.findByLogin('nobody'), undefined)
    assert.equal(await store.users.findByLogin('ALICE'), undefined, 'login lookup is exact')

    assert.equal(await store.users.update(id, { status: 1, loginAttempts: 3, lastLogin: LATE, data: null, introReviewed: false }), true)
    const updated = (await store.users.findById(id))!
    same(updated, { ...expected, status: 1, loginAttempts: 3, lastLogin: LATE, data: null, introReviewed: false, tokenVersion: 1 })
    assert.equal(typeof updated.lastLogin, 'number', 'timestamps come back as numbers')
    assert.equal(await store.users.update(id, { login: 'alice2', passwordHash: 'h2', role: 1, allDeviceTypesAvailable: true }), true)
    match(
      await store.users.findById(id),
      { login: 'alice2', passwordHash: 'h2', role: 1, allDeviceTypesAvailable: true, status: 1, tokenVersion: 2 }
    )
    await store.users.update(id, { status: 1, role: 1, passwordHash: 'h2', login: 'alice3', data: { x: 1 } })
    assert.equal((await store.users.findById(id))!.tokenVersion, 2, 'an unchanged role, status or password keeps the token version')
    await store.users.update(id, { login: 'alice2', lastLogin: 1, loginAttempts: 0 })
    assert.equal((await store.users.findById(id))!.tokenVersion, 2, 'other fields never move it')
    // D11: only a loss moves it; a raised role or a return to ACTIVE takes nothing away.
    await store.users.update(id, { role: 0, status: 0 })
    assert.equal((await store.users.findById(id))!.tokenVersion, 2, 'a raised role and a return to ACTIVE keep the version')
    await store.users.update(id, { status: 2 })
    assert.equal((await store.users.findById(id))!.tokenVersion, 3, 'leaving ACTIVE moves it')
    await store.users.update(id, { status: 1 })
    assert.equal((await store.users.findById(id))!.tokenVersion, 3, 'DISABLED to LOCKED does not (nothing was ACTIVE)')
    await store.users.update(id, { status: 0, passwordHash: 'h3', keepToken: 'kept-token-id' })
    match(await store.users.findById(id), { tokenVersion: 4, keptToken: 'kept-token-id' }, 'a password change keeps the token named')
    await store.users.update(id, { data: { y: 1 }, keepToken: 'ignored' })
    match(await store.users.findById(id), { tokenVersion: 4, keptToken: 'kept-token-id' }, 'no increment, no change of the kept token')
    await store.users.update(id, { role: 1 })
    const demoted = (await store.users.findById(id))!
    same([demoted.tokenVersion, demoted.keptToken], [5, undefined], 'the next increment clears it')
    assert.equal(await store.users.countActiveAdmins(-1) >= 0, true)
    assert.equal(await store.users.update(id, {}), true, 'an empty patch of an existing user is a success')
    assert.equal(await store.users.update(id + 1000, {}), false)
    assert.equal(await store.users.update(id + 1000, { status: 0 }), false)

    const other = await store.users.insert(newUser('bob'))
    assert.ok(other > id, 'ids increase')
    await rejectsConflict(store.users.insert(newUser('alice2')), 'duplicate login')
    await rejectsConflict(store.users.update(other, { login: 'alice2' }), 'rename to a taken login')

    assert.equal(await store.users.delete(id), true)
    assert.equal(await store.users.delete(id), false)
    assert.equal(await store.users.findById(id), undefined)
    assert.ok(await store.users.findById(other))
  })

  check('users: list and count with filters, sorting and paging', async ({ store }) => {
    const ids: Record<string, number> = {}
    for (const [login, role, status] of [['carol', 1, 0], ['anna', 0, 0], ['dave', 1, 2], ['bert', 1, 0], ['Anton', 0, 0]] as const) {
      ids[login] = await store.users.insert(newUser(login, { role, status }))
    }
    const logins = async (filter: Parameters<Store['users']['list']>[0]) => (await store.users.list(filter)).map((u) => u.login)

    same(await logins({}), ['carol', 'anna', 'dave', 'bert', 'Anton'], 'default order: id ascending')
    same(await logins({ sortField: 'id', sortOrder: 'DESC' }), ['Anton', 'bert', 'dave', 'anna', 'carol'])
    // Sorting assertions avoid mixed case: PostgreSQL orders text by the database collation.
    same(await logins({ sortField: 'login', sortOrder: 'ASC', status: 0, role: 1 }), ['bert', 'carol'])
    same(await logins({ sortField: 'login', sortOrder: 'DESC', role: 1 }), ['dave', 'carol', 'bert'])
    same(await logins({ sortField: 'login', role: 1, take: 1, skip: 1 }), ['carol'])
    same(await logins({ login: 'anna' }), ['anna'])
    same(await logins({ loginPattern: 'an%' }), ['anna'], 'LIKE is case-sensitive')
    same(await logins({ loginPattern: '%r%' }), ['carol', 'bert'])
    same(await logins({ loginPattern: '_nn_' }), ['anna'])
    same(await logins({ role: 0 }), ['anna', 'Anton'])
    same(await logins({ status: 2 }), ['dave'])
    same(await logins({ take: 2 }), ['carol', 'anna'])
    same(await logins({ take: 2, skip: 1 }), ['anna', 'dave'])
    same(await logins({ skip: 3 }), ['bert', 'Anton'], 'skip without take')
    same(await logins({ skip: 10 }), [])
    same(await logins({ take: 0 }), [])

    assert.equal(await store.users.count({}), 5)
    assert.equal(await store.users.count({ role: 1 }), 3)
    assert.equal(await store.users.count({ loginPattern: 'A%' }), 1)
    assert.equal(await store.users.count({ status: 0, role: 1, take: 1, skip: 1 }), 2, 'count ignores paging')
    assert.equal(typeof await store.users.count({}), 'number')
    same(await logins({ id: ids.bert }), ['bert'], 'the id filter (a client lists only itself)')
    same(await logins({ id: ids.bert, loginPattern: 'c%' }), [], 'with the other filters')
    assert.equal(await store.users.count({ id: ids.dave, status: 2 }), 1)
    assert.equal(await store.users.count({ id: ids.dave, status: 0 }), 0)
    const listed = await store.users.list({ login: 'carol' })
    assert.equal(listed[0]!.id, ids.carol)
    assert.equal(typeof listed[0]!.id, 'number')
  })
}

function assignmentChecks (check: Register): void {
  check('users: network and device-type assignments', async ({ store }) => {
    const user = await store.users.insert(newUser('u'))
    const other = await store.users.insert(newUser('v'))
    const n1 = await store.networks.insert({ name: 'n1', description: null })
    const n2 = await store.networks.insert({ name: 'n2', description: null })
    const d1 = await store.deviceTypes.insert({ name: 'd1', description: null })
    const d2 = await store.deviceTypes.insert({ name: 'd2', description: null })

    same(await store.users.networkIds(user), [])
    await store.users.assignNetwork(user, n2)
    await store.users.assignNetwork(user, n1)
    await store.users.assignNetwork(user, n2)
    same(await store.users.networkIds(user), [n1, n2], 'ascending, assigning twice is a no-op')
    for (const id of await store.users.networkIds(user)) assert.equal(typeof id, 'number')
    await store.users.assignNetwork(other, n1)
    await store.users.unassignNetwork(user, n1)
    await store.users.unassignNetwork(user, n1)
    same(await store.users.networkIds(user), [n2])
    same(await store.users.networkIds(other), [n1], 'another user keeps its assignment')

    await store.users.assignDeviceType(user, d2)
    await store.users.assignDeviceType(user, d1)
    await store.users.assignDeviceType(user, d1)
    await store.users.assignDeviceType(other, d1)
    same(await store.users.deviceTypeIds(user), [d1, d2])
    await store.users.unassignDeviceType(user, d2)
    same(await store.users.deviceTypeIds(user), [d1])
    await store.users.assignDeviceType(user, d2)
    await store.users.unassignAllDeviceTypes(user)
    same(await store.users.deviceTypeIds(user), [])
    same(await store.users.deviceTypeIds(other), [d1])

    // Whose rights a deletion takes away: clients only, device types only when assigned individually.
    const admin = await store.users.insert(newUser('w', { role: 0, allDeviceTypesAvailable: false }))
    const flagged = await store.users.insert(newUser('x', { allDeviceTypesAvailable: true }))
    await store.users.assignNetwork(admin, n1)
    await store.users.assignDeviceType(admin, d1)
    await store.users.assignDeviceType(flagged, d1)
    await store.users.update(other, { allDeviceTypesAvailable: false })
    same(await store.users.clientsOfNetwork(n1), [other], 'an administrator\'s reach ignores assignments')
    same(await store.users.clientsOfNetwork(n2), [user])
    same(await store.users.clientsOfDeviceType(d1), [other], 'nor does the all-device-types flag\'s')
    same(await store.users.clientsOfDeviceType(d2), [])

    await rejectsConflict(store.users.assignNetwork(user, n2 + 1000), 'assigning a missing network')
    await rejectsConflict(store.users.assignDeviceType(user + 1000, d1), 'assigning to a missing user')

    // Deleting a user removes its assignments, not the networks or types.
    await store.users.assignNetwork(user, n1)
    await store.users.assignDeviceType(user, d2)
    assert.equal(await store.users.delete(user), true)
    same(await store.users.networkIds(user), [])
    same(await store.users.deviceTypeIds(user), [])
    assert.ok(await store.networks.findById(n1))
    assert.ok(await store.deviceTypes.findById(d2))
    same(await store.users.networkIds(other), [n1])
  })
}

function entityAndDeviceChecks (check: Register): void {
  for (const area of ['networks', 'deviceTypes'] as const) {
    const table = area === 'networks' ? 'networks' : 'device_types'

    check(`${area}: insert, find, update, delete`, async ({ store }) => {
      const repo = store[area]
      const id = await repo.insert({ name: 'Lab', description: 'first floor' })
      assert.equal(typeof id, 'number')
      same(await repo.findById(id), { id, name: 'Lab', description: 'first floor' })
      same(await repo.findByName('Lab'), { id, name: 'Lab', description: 'first floor' })
      assert.equal(await repo.findByName('lab'), undefined, 'names are exact')
      assert.equal(await repo.findById(id + 1000), undefined)
      await rejectsConflict(repo.insert({ name: 'Lab', description: null }), 'duplicate name')

      const version = async (): Promise<number | undefined> => {
        const db = kysely(store)
        if (db === undefined) return undefined
        const row = await db.selectFrom(table).select('entity_version').where('id', '=', id).executeTakeFirstOrThrow()
        return Number(row.entity_version)
      }
      const v0 = await version()
      assert.equal(await repo.update(id, { description: null }), true)
      same(await repo.findById(id), { id, name: 'Lab', description: null }, 'a partial patch keeps the name')
      assert.equal(await repo.update(id, { name: 'Lab 2' }), true)
      same(await repo.findById(id), { id, name: 'Lab 2', description: null })
      if (v0 !== undefined) assert.equal(await version(), v0 + 2, 'each update bumps entity_version')
      assert.equal(await repo.update(id + 1000, { name: 'x' }), false)
      const second = await repo.insert({ name: 'Other', description: null })
      await rejectsConflict(repo.update(second, { name: 'Lab 2' }), 'rename to a taken name')

      assert.equal(await repo.delete(id), true)
      assert.equal(await repo.delete(id), false)
      assert.equal(await repo.findById(id), undefined)
      assert.ok(await repo.findById(second))
    })

    check(`${area}: delete cascades to devices and user assignments`, async ({ store }) => {
      const network = await store.networks.insert({ name: 'net', description: null })
      const type = await store.deviceTypes.insert({ name: 'type', description: null })
      const keep = area === 'networks'
        ? await store.networks.insert({ name: 'kept', description: null })
        : await store.deviceTypes.insert({ name: 'kept', description: null })
      const user = await store.users.insert(newUser('u'))
      await store.users.assignNetwork(user, network)
      await store.users.assignDeviceType(user, type)
      await store.devices.insert({ id: 'dev-1', name: 'one', data: null, networkId: network, deviceTypeId: type, isBlocked: false })
      await store.devices.insert({
        id: 'dev-2',
        name: 'two',
        data: null,
        networkId: area === 'networks' ? keep : network,
        deviceTypeId: area === 'networks' ? type : keep,
        isBlocked: false
      })
      if (area === 'networks') {
        await store.users.assignNetwork(user, keep)
        assert.equal(await store.networks.delete(network), true)
        same(await store.users.networkIds(user), [keep])
        same(await store.users.deviceTypeIds(user), [type])
      } else {
        await store.users.assignDeviceType(user, keep)
        assert.equal(await store.deviceTypes.delete(type), true)
        same(await store.users.deviceTypeIds(user), [keep])
        same(await store.users.networkIds(user), [network])
      }
      assert.equal(await store.devices.findById('dev-1'), undefined, 'the device went with it')
      assert.ok(await store.devices.findById('dev-2'), 'devices elsewhere stay')
      assert.ok(await store.users.findById(user), 'the user stays')
    })

    check(`${area}: list and count with scope, filters, sorting and paging`, async ({ store }) => {
      const repo = store[area]
      const ids: Record<string, number> = {}
      for (const name of ['lab-b', 'home', 'lab-a', 'Lab-c', 'office']) ids[name] = await repo.insert({ name, description: `${name} desc` })
      const names = async (
        scope: 'all' | number[], filter: Parameters<typeof repo.list>[1]
      ) => (await repo.list(scope, filter)).map((n) => n.name)

      same(await repo.list('all', { name: 'home' }), [{ id: ids.home, name: 'home', description: 'home desc' }])
      same(await names('all', {}), ['lab-b', 'home', 'lab-a', 'Lab-c', 'office'], 'default order: id ascending')
      same(await names('all', { sortField: 'id', sortOrder: 'DESC' }), ['office', 'Lab-c', 'lab-a', 'home', 'lab-b'])
      // Sorting assertions avoid mixed case: PostgreSQL orders text by the database collation.
      const lower = [ids['lab-b']!, ids.home!, ids['lab-a']!, ids.office!]
      same(await names(lower, { sortField: 'name' }), ['home', 'lab-a', 'lab-b', 'office'])
      same(await names(lower, { sortField: 'name', sortOrder: 'DESC' }), ['office', 'lab-b', 'lab-a', 'home'])
      same(await names('all', { namePattern: 'lab%', sortField: 'name' }), ['lab-a', 'lab-b'], 'LIKE is case-sensitive')
      same(await names('all', { namePattern: '%-_' }), ['lab-b', 'lab-a', 'Lab-c'])
      same(await names('all', { name: 'Lab-c' }), ['Lab-c'])
      same(await names('all', { name: 'lab-c' }), [])
      same(await names([ids['lab-a']!, ids.office!, ids.home!], { sortField: 'name' }), ['home', 'lab-a', 'office'])
      same(await names([ids['lab-a']!, ids.office!], { namePattern: 'lab%' }), ['lab-a'])
      same(await names([], {}), [], 'an empty scope sees nothing')
      same(await names('all', { take: 2, skip: 1 }), ['home', 'lab-a'])
      same(await names(lower, { sortField: 'name', take: 2, skip: 1 }), ['lab-a', 'lab-b'])
      same(await names('all', { skip: 4 }), ['office'], 'skip without take')

      assert.equal(await repo.count('all', {}), 5)
      assert.equal(await repo.count('all', { namePattern: 'lab%' }), 2)
      assert.equal(await repo.count('all', { name: 'home' }), 1)
      assert.equal(await repo.count([ids.home!, ids.office!], {}), 2)
      assert.equal(await repo.count([ids.home!, ids.office!], { namePattern: 'lab%' }), 0)
      assert.equal(await repo.count([], {}), 0)
      assert.equal(await repo.count('all', { take: 1, skip: 1 }), 5, 'count ignores paging')
      assert.equal(typeof await repo.count('all', {}), 'number')
      for (const row of await repo.list('all', {})) assert.equal(typeof row.id, 'number')
    })
  }

  check('devices: insert and findById', async ({ store }) => {
    const network = await store.networks.insert({ name: 'n', description: null })
    const type = await store.deviceTypes.insert({ name: 'd', description: null })
    const data: JsonObject = { z: 1, a: { c: 'x', b: null }, list: [{ q: 1, p: 2 }] }
    await store.devices.insert({ id: 'sensor-1', name: 'Sensor', data, networkId: network, deviceTypeId: type, isBlocked: true })
    await store.devices.insert({ id: 'sensor-2', name: 'Other', data: null, networkId: network, deviceTypeId: type, isBlocked: false })
    const found = await store.devices.findById('sensor-1')
    same(found, { id: 'sensor-1', name: 'Sensor', data, networkId: network, deviceTypeId: type, isBlocked: true })
    assert.equal(JSON.stringify(found!.data), JSON.stringify(data), 'JSON key order kept')
    assert.equal(typeof found!.networkId, 'number')
    assert.equal(typeof found!.deviceTypeId, 'number')
    same(
      await store.devices.findById('sensor-2'),
      { id: 'sensor-2', name: 'Other', data: null, networkId: network, deviceTypeId: type, isBlocked: false }
    )
    assert.equal(await store.devices.findById('SENSOR-1'), undefined, 'device ids are exact')
    assert.equal(await store.devices.findById('missing'), undefined)
    await rejectsConflict(
      store.devices.insert({ id: 'sensor-1', name: 'again', data: null, networkId: network, deviceTypeId: type, isBlocked: false }),
      'duplicate device id'
    )
    await rejectsConflict(
      store.devices.insert({ id: 'sensor-3', name: 'x', data: null, networkId: network + 1000, deviceTypeId: type, isBlocked: false }),
      'missing network'
    )
  })
}

function sessionChecks (check: Register): void {
  check('presence: mark online, refresh, expire, mark offline, filter devices', async ({ store }) => {
    const network = await store.networks.insert({ name: 'n', description: null })
    const type = await store.deviceTypes.insert({ name: 'd', description: null })
    for (const id of ['p-1', 'p-2', 'p-3']) await store.devices.insert({
      id, name: id, data: null, networkId: network, deviceTypeId: type, isBlocked: false
    })
    const t0 = LATE
    same([...(await store.presence.lastSeen(['p-1', 'p-2'])).entries()], [], 'never seen: no entry')
    same([...(await store.presence.lastSeen([])).entries()], [], 'no ids: no query, no entry')
    same([...await store.presence.refresh(['p-1'], t0, t0 - 1000)], [], 'refresh needs an online row')
    assert.equal(await store.presence.markOnline('p-1', t0, t0 - 1000), 'came-online', 'first sight comes online')
    assert.equal(await store.presence.markOnline('p-1', t0 + 10, t0 - 990), 'none', 'already online')
    same([...await store.presence.refresh(['p-1'], t0 + 500, t0 - 500)], ['p-1'], 'fresh and online: refreshed')
    same([...await store.presence.refresh(['p-1'], t0 + 100, t0 - 900)], ['p-1'], 'an older time still counts as refreshed')
    same((await store.presence.lastSeen(['p-1'])).get('p-1'), t0 + 500, 'lastSeen never moves backwards')
    assert.equal(typeof (await store.presence.lastSeen(['p-1'])).get('p-1'), 'number', 'int8 read as a number')
    assert.equal(await store.presence.markOnline('p-2', t0, t0 - 1000), 'came-online')

    same(
      await store.devices.list(FULL_SCOPE, { presence: { online: true, since: t0 }, sortField: 'id' }).then((d) => d.map((x) => x.id)),
      ['p-1', 'p-2']
    )
    same(
      await store.devices.list(FULL_SCOPE, { presence: { online: false, since: t0 } }).then((d) => d.map((x) => x.id)), ['p-3'],
      'never seen is offline'
    )
    same(await store.devices.list(FULL_SCOPE, { presence: { online: true, since: t0 + 1 } }).then((d) => d.map((x) => x.id)), ['p-1'])
    assert.equal(await store.devices.count(FULL_SCOPE, { presence: { online: false, since: t0 + 1 } }), 2)

    // Window 1000 ms: at t0 + 1400, p-2 (seen at t0) has expired, p-1 (t0 + 500) has not.
    const since = t0 + 400
    same(await store.presence.listExpired(since, 10), ['p-2'])
    same([...await store.presence.refresh(['p-2'], t0 + 1600, since)], [], 'an expired device is not refreshed')
    // A heartbeat's list, longer than one statement takes: only the fresh online devices, p-2 stays expired.
    const list = ['p-1', 'p-2', 'p-3', ...Array.from({ length: 600 }, (_, i) => `unknown-${i}`)]
    same([...await store.presence.refresh(list, t0 + 1000, since)], ['p-1'], 'a list: the devices it refreshed')
    same((await store.presence.lastSeen(['p-1', 'p-2'])).get('p-2'), t0, 'the expired one did not move')
    same([...await store.presence.refresh([], t0 + 1000, since)], [], 'an empty list')
    assert.equal(await store.presence.markOffline('p-2', since), true, 'marked offline once')
    assert.equal(await store.presence.markOffline('p-2', since), false, 'and only once')
    same(await store.presence.listExpired(since, 10), [])
    assert.equal(await store.presence.markOffline('p-1', since), false, 'a fresh device is not marked offline')
    assert.equal(await store.presence.markOnline('p-2', t0 + 1700, since), 'came-online', 'back after being announced offline')
    assert.equal(await store.presence.markOnline('p-1', t0 + 5000, t0 + 4000), 'expired', 'expired before any sweep')
    assert.equal((await store.presence.lastSeen(['p-1'])).get('p-1'), t0 + 5000)

    await store.devices.delete('p-1')
    same([...(await store.presence.lastSeen(['p-1', 'p-2'])).keys()], ['p-2'], 'deleting the device deletes its presence')
    await rejectsConflict(store.presence.markOnline('missing', t0, t0 - 1000), 'presence of a missing device')
  })

  check('mqtt sessions: subscribe, advance the cursor forward only, unsubscribe, clear', async ({ store }) => {
    const userId = await store.users.insert(newUser('mqtt-owner'))
    const other = await store.users.insert(newUser('mqtt-other'))
    const key = { userId, clientId: 'led-1' }
    same(await store.mqttSessions.list(key), [], 'no session yet')
    await store.mqttSessions.subscribe(key, 'dh/command/+/+/led-1/#', 1, LATE)
    await store.mqttSessions.subscribe(key, 'dh/notification/#', 0, LATE + 1)
    await store.mqttSessions.subscribe({ userId: other, clientId: 'led-1' }, 'dh/command/#', 1, LATE)
    same(await store.mqttSessions.list(key), [
      { topic: 'dh/command/+/+/led-1/#', qos: 1, cursor: null, createdAt: LATE },
      { topic: 'dh/notification/#', qos: 0, cursor: null, createdAt: LATE + 1 }
    ], 'by topic, no cursor before the first acknowledgement')
    await store.mqttSessions.advance(key, 'dh/command/+/+/led-1/#', LATE + 10)
    await store.mqttSessions.advance(key, 'dh/command/+/+/led-1/#', LATE + 5)
    await store.mqttSessions.advance(key, 'dh/missing', LATE + 5)
    const [command] = await store.mqttSessions.list(key)
    assert.equal(command?.cursor, LATE + 10, 'the cursor never moves back (int8 read as a number)')
    await store.mqttSessions.subscribe(key, 'dh/command/+/+/led-1/#', 0, LATE + 20)
    match(
      await store.mqttSessions.list(key), [{ qos: 0, cursor: LATE + 10, createdAt: LATE }, { topic: 'dh/notification/#' }],
      'subscribing again changes the QoS, keeps the cursor'
    )
    await store.mqttSessions.unsubscribe(key, 'dh/notification/#')
    await store.mqttSessions.unsubscribe(key, 'dh/notification/#')
    match(await store.mqttSessions.list(key), [{ topic: 'dh/command/+/+/led-1/#' }], 'unsubscribed once, the second time is a no-op')
    await store.mqttSessions.clear(key)
    same(await store.mqttSessions.list(key), [], 'cleared')
    assert.equal(
      (await store.mqttSessions.list({ userId: other, clientId: 'led-1' })).length, 1, 'another user\'s client with the same id is apart'
    )
    await store.users.delete(other)
    same(await store.mqttSessions.list({ userId: other, clientId: 'led-1' }), [], 'deleting the user deletes their sessions')
  })

  check('mqtt sessions: an expiry set as the connection ends drops the session once passed', async ({ store }) => {
    const userId = await store.users.insert(newUser('mqtt-expiring'))
    const key = { userId, clientId: 'led-3' }
    const other = { userId, clientId: 'led-4' }
    await store.mqttSessions.subscribe(key, 'dh/command/#', 1, LATE)
    await store.mqttSessions.subscribe(other, 'dh/command/#', 1, LATE)
    await store.mqttSessions.setExpiry(key, LATE + 100)
    await store.mqttSessions.setExpiry(other, LATE + 300)
    assert.equal(await store.mqttSessions.dropExpired(LATE + 99, key), 0, 'not yet expired')
    assert.equal(await store.mqttSessions.dropExpired(LATE + 200, other), 0, 'another session\'s deadline is its own')
    await store.mqttSessions.subscribe(key, 'dh/notification/#', 0, LATE + 150)
    assert.equal(await store.mqttSessions.dropExpired(LATE + 100, key), 1, 'expired: its subscriptions with the deadline go')
    match(await store.mqttSessions.list(key), [{ topic: 'dh/notification/#' }], 'a subscription added since has no deadline')
    await store.mqttSessions.setExpiry(other, null)
    assert.equal(await store.mqttSessions.dropExpired(LATE + 1000), 0, 'null: never expires')
    await store.mqttSessions.hold(other, 'b:2', LATE)
    await store.mqttSessions.setExpiry(other, LATE + 300, 'a:1')
    assert.equal(await store.mqttSessions.dropExpired(LATE + 1000), 0, 'a connection taken over sets no deadline')
    await store.mqttSessions.release(other, 'b:2')
    await store.mqttSessions.setExpiry(other, LATE + 300, 'b:2')
    assert.equal(await store.mqttSessions.dropExpired(LATE + 1000), 0, 'nor one that let go of its hold')
    await store.mqttSessions.hold(other, 'b:3', LATE)
    await store.mqttSessions.setExpiry(other, LATE + 300, 'b:3')
    await store.mqttSessions.release(other, 'b:3')
    assert.equal(await store.mqttSessions.dropExpired(LATE + 1000), 1, 'the holder\'s own deadline holds; pruned without a key')
    same(await store.mqttSessions.list(other), [])
  })

  check('mqtt sessions: a held session expires once its lease has lapsed for longer than its interval', async ({ store }) => {
    const userId = await store.users.insert(newUser('mqtt-leased'))
    const crashed = { userId, clientId: 'led-5' }
    const live = { userId, clientId: 'led-6' }
    const forever = { userId, clientId: 'led-7' }
    for (const key of [crashed, live, forever]) await store.mqttSessions.subscribe(key, 'dh/command/#', 1, LATE)
    // What an instance that dies while its connections are up leaves: holds, no deadline on the subscriptions.
    await store.mqttSessions.hold(crashed, 'dead:1', LATE, { expiryMs: 100, until: LATE + 50 })
    await store.mqttSessions.hold(live, 'live_%:1', LATE, { expiryMs: 100, until: LATE + 50 })
    await store.mqttSessions.hold(forever, 'dead:2', LATE)
    await store.mqttSessions.hold({ userId, clientId: 'led-8' }, 'live_%x:1', LATE, { expiryMs: 100, until: LATE + 50 })
    assert.equal(await store.mqttSessions.dropExpired(LATE + 149), 0, 'the lease plus the interval not yet over')
    await store.mqttSessions.renewHolds('live_%', LATE + 500)
    assert.equal(await store.mqttSessions.dropExpired(LATE + 150, live), 0, 'a renewed lease keeps its session')
    assert.equal(await store.mqttSessions.dropExpired(LATE + 150, crashed), 1, 'lapsed by its interval: expired')
    same(await store.mqttSessions.list(crashed), [])
    assert.equal(await store.mqttSessions.holderOf(crashed), undefined, 'its hold goes with it')
    match(await store.mqttSessions.holderOf(live), { holder: 'live_%:1' })
    assert.equal(await store.mqttSessions.dropExpired(LATE + 599), 0, 'the renewal was of that instance\'s holds only, by prefix')
    assert.equal(await store.mqttSessions.holderOf({ userId, clientId: 'led-8' }), undefined, 'another instance\'s lapsed hold is pruned')
    assert.equal(await store.mqttSessions.dropExpired(LATE + 600), 1, 'pruned without a key once the renewed lease lapsed too')
    assert.equal((await store.mqttSessions.list(forever)).length, 1, 'a session that never expires is kept, held or not')
    match(await store.mqttSessions.holderOf(forever), { holder: 'dead:2' })
  })

  check('mqtt sessions: one holder at a time; a release lets go of its own hold only', async ({ store }) => {
    const userId = await store.users.insert(newUser('mqtt-holder'))
    const key = { userId, clientId: 'led-2' }
    assert.equal(await store.mqttSessions.holderOf(key), undefined, 'nobody holds it yet')
    await store.mqttSessions.hold(key, 'a:1', LATE)
    same(await store.mqttSessions.holderOf(key), { holder: 'a:1', since: LATE })
    await store.mqttSessions.hold(key, 'b:1', LATE + 1)
    await store.mqttSessions.release(key, 'a:1')
    same(await store.mqttSessions.holderOf(key), { holder: 'b:1', since: LATE + 1 }, 'taken over: the old holder\'s release is a no-op')
    await store.mqttSessions.release(key, 'b:1')
    assert.equal(await store.mqttSessions.holderOf(key), undefined, 'released')
    await store.mqttSessions.hold(key, 'c:1', LATE + 2)
    await store.users.delete(userId)
    assert.equal(await store.mqttSessions.holderOf(key), undefined, 'deleting the user deletes their holds')
  })

}

/** The feed's reads per selector shape (store/repositories/message-clock.ts, `selectorShape`). */
function feedShapeChecks (check: Register): void {
  check('feed: each selector reads its own rows, through a template per shape or built per call', async ({ store }) => {
    const networkId = await store.networks.insert({ name: 'shape-net', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'shape-type', description: null })
    const devices = ['shape-0', 'shape-1', 'shape-2', 'shape-3', 'shape-4', 'shape-5']
    for (const id of devices) {
      await store.devices.insert({ id, name: id, data: null, networkId, deviceTypeId, isBlocked: false })
      await store.notifications.insert({ deviceId: id, networkId, deviceTypeId, parameters: null, notification: `n-${id}` })
      await store.notifications.insert({ deviceId: id, networkId, deviceTypeId, parameters: null, notification: 'common' })
    }
    const upTo = await store.feed.position()
    const read = async (selector: MessageSelector): Promise<string[]> =>
      (await store.feed.notifications({ selector, after: LOG_ORIGIN, upTo, limit: 100 })).map((n) => `${n.deviceId}/${n.notification}`)
    // The same shape (one device, one name) with other values: the second read must not see the first's.
    same(await read({ scope: FULL_SCOPE, deviceIds: ['shape-0'], names: ['n-shape-0'] }), ['shape-0/n-shape-0'], 'one device, one name')
    same(
      await read({ scope: FULL_SCOPE, deviceIds: ['shape-1'], names: ['n-shape-1'] }), ['shape-1/n-shape-1'],
      'the same shape, its own values'
    )
    same(await read({ scope: FULL_SCOPE, deviceIds: ['shape-2'], names: ['n-shape-3'] }), [], 'a name of another device: nothing')
    // Lists longer than a template takes (more than four values) are built per call: the same rules.
    same(
      await read({ scope: FULL_SCOPE, deviceIds: devices.slice(0, 5), names: ['common'] }),
      devices.slice(0, 5).map((id) => `${id}/common`), 'five devices'
    )
    same(
      await read({ scope: { networkIds: [networkId, -1, -2, -3, -4], deviceTypeIds: 'all' }, deviceIds: ['shape-5'] }),
      ['shape-5/n-shape-5', 'shape-5/common'], 'five networks in scope'
    )
    same(
      await read({ scope: { networkIds: [-1], deviceTypeIds: [deviceTypeId] }, deviceIds: ['shape-5'] }), [],
      'out of the scope\'s networks: nothing'
    )
  })
}

function messageChecks (check: Register): void {
  check('notifications: insert returns the stored record', async ({ store }) => {
    const parameters = { temperature: 21.5, unit: 'C', extra: { b: 2, a: 1 } }
    const started = Date.now()
    const first = await store.notifications.insert({
      notification: 'temp', deviceId: 'dev-1', networkId: 7, deviceTypeId: 9, parameters, timestamp: LATE
    })
    same(
      first,
      {
        id: first.id, notification: 'temp', deviceId: 'dev-1', networkId: 7, deviceTypeId: 9, timestamp: first.stamp, parameters,
        stamp: first.stamp
      }
    )
    assert.ok(
      first.stamp >= started && first.stamp <= Date.now() + 1000,
      'the stamp (the poll cursor) is the server clock\'s, not the client timestamp'
    )
    assert.notEqual(first.timestamp, LATE, 'and so is the timestamp: a client timestamp far from the clock is replaced (issue #23)')
    const kept = await store.notifications.insert(
      { notification: 'temp', deviceId: 'dev-1', networkId: 7, deviceTypeId: 9, parameters, timestamp: LATE + 5_000 }, LATE + 5_100
    )
    assert.equal(
      kept.timestamp, Math.max(LATE + 5_000, first.stamp + 1),
      'one just behind the clock\'s reading is kept, unless a later stamp was drawn'
    )
    assert.equal(kept.stamp, kept.timestamp)
    assert.equal(typeof first.id, 'number')
    assert.equal(typeof first.timestamp, 'number')
    assert.equal(JSON.stringify(first.parameters), JSON.stringify(parameters), 'JSON key order kept')
    const before = Date.now()
    const second = await store.notifications.insert({
      notification: 'ping', deviceId: 'dev-2', networkId: null, deviceTypeId: null, parameters: null
    })
    assert.ok(second.id > first.id, 'ids increase')
    // The message clock is strictly increasing, so it may run a few ms ahead of Date.now().
    assert.ok(second.timestamp >= before && second.timestamp <= Date.now() + 1000, 'the store assigns a timestamp when none is given')
    same(
      second,
      {
        id: second.id, notification: 'ping', deviceId: 'dev-2', networkId: null, deviceTypeId: null, timestamp: second.timestamp,
        parameters: null, stamp: second.timestamp
      }
    )
    assert.ok(second.stamp > first.stamp, 'stamps increase')
  })

  check('feed: reads after a cursor stop at upTo, the mark a reader may trust (issue #24)', async ({ store }) => {
    const networkId = await store.networks.insert({ name: 'feed-net', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'feed-type', description: null })
    await store.devices.insert({ id: 'feed-dev', name: 'Feed', data: null, networkId, deviceTypeId, isBlocked: false })
    const selector = { scope: FULL_SCOPE }
    const message = { deviceId: 'feed-dev', networkId, deviceTypeId, parameters: null }
    const n = [await store.notifications.insert({
      ...message, notification: 'n1'
    }), await store.notifications.insert({ ...message, notification: 'n2' }),
      await store.notifications.insert({ ...message, notification: 'n3' })]
    const command = { ...message, userId: null, lifetime: null, status: null, result: null }
    const c = [await store.commands.insert(
      { ...command, command: 'c1' }, Date.now()
    ), await store.commands.insert({ ...command, command: 'c2' }, Date.now()),
      await store.commands.insert({ ...command, command: 'c3' }, Date.now())]
    const u = [await store.commands.update(
      'feed-dev', c[0]!.id, { status: 'u1' }, Date.now()
    ), await store.commands.update('feed-dev', c[1]!.id, { status: 'u2' }, Date.now()),
      await store.commands.update('feed-dev', c[2]!.id, { status: 'u3' }, Date.now())].map((record) => record!)
    const ids = (records: Array<{ id: number }>): number[] => records.map((record) => record.id)
    const limit = 10

    const position = await store.feed.position()
    same(
      position, { clock: u[2]!.lastUpdated, notification: n[2]!.id, command: c[2]!.id },
      'position: the newest stamp and the newest id of each kind'
    )
    const at = (clock: number): LogCursor => ({ ...position, clock })
    // upTo is the mark a reader was handed: a row above it may sit past a stamp drawn earlier and
    // not yet committed, so reading it would move the reader past that stamp.
    same(
      ids(await store.feed.notifications({ selector, after: LOG_ORIGIN, upTo: at(n[1]!.stamp), limit })), ids(n.slice(0, 2)),
      'notifications: up to upTo, inclusive'
    )
    same(
      ids(await store.feed.notifications({ selector, after: at(n[0]!.stamp), upTo: at(n[0]!.stamp), limit })), [],
      'notifications: nothing when after = upTo'
    )
    same(
      ids(await store.feed.commands({ selector, after: LOG_ORIGIN, upTo: at(c[1]!.stamp), limit })), ids(c.slice(0, 2)),
      'commands: up to upTo, inclusive'
    )
    same(
      ids(await store.feed.commands({ selector, after: at(c[1]!.stamp), upTo: at(c[0]!.stamp), limit })), [],
      'commands: nothing when upTo is behind after'
    )
    same(
      ids(await store.feed.updates({ selector, after: LOG_ORIGIN, upTo: at(u[1]!.lastUpdated), limit })), ids(u.slice(0, 2)),
      'updates: up to the upTo stamp, inclusive'
    )
    same(
      ids(await store.feed.updates({ selector, after: at(u[0]!.lastUpdated), upTo: at(u[2]!.lastUpdated - 1), limit })), ids(u.slice(1, 2)),
      'updates: between after and upTo'
    )
    same(
      ids(await store.feed.notifications({ selector, after: LOG_ORIGIN, upTo: position, limit })), ids(n),
      'notifications: up to the position, all'
    )
    same(
      ids(await store.feed.commands({ selector, after: LOG_ORIGIN, upTo: position, limit })), ids(c), 'commands: up to the position, all'
    )
    same(ids(await store.feed.updates({ selector, after: LOG_ORIGIN, upTo: position, limit })), ids(u), 'updates: up to the position, all')
    same(
      ids(await store.feed.notifications({ selector, after: LOG_ORIGIN, upTo: position, limit: 2 })), ids(n.slice(0, 2)),
      'limit still applies'
    )
    // A cursor of an earlier version (plugins resume by id): ids it had are skipped whatever the clock.
    same(
      ids(await store.feed.notifications({ selector, after: { clock: 0, notification: n[0]!.id, command: 0 }, upTo: position, limit })),
      ids(n.slice(1)), 'notifications: after the cursor\'s id'
    )
    same(
      ids(await store.feed.commands({ selector, after: { clock: 0, notification: 0, command: c[1]!.id }, upTo: position, limit })),
      ids(c.slice(2)), 'commands: after the cursor\'s id'
    )
  })

  check('feed: with liveAt, commands expired by then are left out (R7)', async ({ store }) => {
    const networkId = await store.networks.insert({ name: 'live-net', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'live-type', description: null })
    await store.devices.insert({ id: 'live-dev', name: 'Live', data: null, networkId, deviceTypeId, isBlocked: false })
    const command = { deviceId: 'live-dev', networkId, deviceTypeId, parameters: null, userId: null, status: null, result: null }
    const now = Date.now()
    const short = await store.commands.insert({ ...command, command: 'short', lifetime: 1 }, now)
    const none = await store.commands.insert({ ...command, command: 'none', lifetime: 0 }, now)
    const forever = await store.commands.insert({ ...command, command: 'forever', lifetime: null }, now)
    const answered = await store.commands.insert({ ...command, command: 'answered', lifetime: 1 }, now)
    await store.commands.update('live-dev', answered.id, { status: 'done' }, now)
    const query = {
      selector: { scope: FULL_SCOPE, deviceIds: ['live-dev'] }, after: LOG_ORIGIN, upTo: await store.feed.position(), limit: 10
    }
    const names = async (liveAt?: number): Promise<string[]> => (await store.feed.commands({ ...query, liveAt })).map((c) => c.command)
    same(await names(), ['short', 'none', 'forever', 'answered'], 'without liveAt: every command')
    same(await names(short.stamp + 1000), ['short', 'none', 'forever', 'answered'], 'live until its lifetime has passed')
    same(await names(short.stamp + 1001), ['none', 'forever', 'answered'], 'then left out; 0 and null are no lifetime, an update keeps it')
    assert.ok(none.id < forever.id)
  })
}

/** A batch of notifications written together (the log's group commit). */
function batchChecks (check: Register): void {
  check('notifications: insertMany returns what reads back, in order, past one statement\'s rows (issue #26)', async ({ store }) => {
    const list = Array.from({ length: 150 }, (_, i) => ({
      notification: `n${i}`, deviceId: `dev-${i % 3}`, networkId: i % 2 === 0 ? 7 : null, deviceTypeId: 9,
      parameters: i % 5 === 0 ? null : { i, nested: { z: 1, a: [i, 'x'] } }
    }))
    const records = await store.notifications.insertMany(list, Date.now())
    assert.equal(records.length, 150)
    for (let i = 1; i < records.length; i++) {
      assert.ok(records[i]!.id > records[i - 1]!.id, 'ids follow the list')
      assert.equal(records[i]!.stamp, records[i - 1]!.stamp + 1, 'stamps are consecutive')
    }
    for (const [i, record] of records.entries()) {
      const stored = await store.notifications.findById(record.id)
      same(record, stored, `record ${i} is what reads back`)
      assert.equal(record.notification, `n${i}`)
    }
  })

  // Stores may build an insert's record from its input instead of reading the row back (issue
  // #26): what they answer must be what a read gives, single or combined into one statement.
  check('messages: concurrent inserts, with and without a ring, answer what reads back', async ({ store }) => {
    const networkId = await store.networks.insert({ name: 'insert-net', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'insert-type', description: null })
    await store.devices.insert({ id: 'insert-dev', name: 'Insert', data: null, networkId, deviceTypeId, isBlocked: false })
    const message = { deviceId: 'insert-dev', networkId, deviceTypeId }
    const links = new Map<object, DrawLink>()
    const drawn = (record: object, link: DrawLink): void => {
      assert.ok(!links.has(record), 'a record is drawn once')
      links.set(record, link)
    }
    for (const ring of [undefined, { channel: 'devicehub_contract', drawn }]) {
      // Seven at once: a store that combines writes gets batches of one, a few and several.
      const notifications = await Promise.all(Array.from({ length: 7 }, (_, i) => store.notifications.insert({
        ...message, notification: `n${i}`, parameters: i % 3 === 0 ? null : { i, nested: { z: 1, a: [i, 'x'] } }
      }, Date.now(), ring)))
      const commands = await Promise.all(Array.from({ length: 7 }, (_, i) => store.commands.insert({
        ...message, command: `c${i}`, userId: null, parameters: i % 3 === 0 ? null : { i, quote: 'a "b" \\ c' },
        lifetime: i % 2 === 0 ? null : 60 + i, status: i === 1 ? 'Pending' : null, result: i === 2 ? { ok: true } : null
      }, Date.now(), ring)))
      for (const [i, record] of notifications.entries()) {
        same(record, await store.notifications.findById(record.id), `notification ${i} (ring: ${ring !== undefined})`)
        assert.equal(record.notification, `n${i}`)
      }
      for (const [i, record] of commands.entries()) {
        same(record, await store.commands.findById(record.id), `command ${i} (ring: ${ring !== undefined})`)
        assert.equal(record.command, `c${i}`)
        assert.equal(record.isUpdated, false)
        assert.equal(record.lastUpdated, record.stamp)
      }
      if (ring === undefined) assert.equal(links.size, 0, 'no ring, no links')
      else drawChainChecks(store.dialect, links, [...notifications, ...commands], (record) => record.stamp)
    }
    // Updates that ride: each its link at its new lastUpdated, one of them of a command that is not there.
    const [first, second] = await store.commands.query({ scope: FULL_SCOPE, deviceIds: ['insert-dev'], sortField: 'timestamp', take: 2 })
    links.clear()
    const ring = { channel: 'devicehub_contract', drawn }
    const updated = await Promise.all([first!.id, second!.id, 999_999].map((id, i) =>
      store.commands.update('insert-dev', id, { status: `s${i}` }, Date.now(), ring)))
    assert.equal(updated[2], undefined, 'a missing command is not updated')
    drawChainChecks(store.dialect, links, [updated[0]!, updated[1]!], (record) => record.lastUpdated)
  })

  // SQLite writes these rows with `insert or fail` (no statement journal): the rows before the bad
  // one are undone only because the failure rolls back the whole transaction, as the log writes it.
  check('notifications: a batch that fails in its transaction leaves none of its rows', async ({ store }) => {
    const networkId = await store.networks.insert({ name: 'fail-net', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'fail-type', description: null })
    await store.devices.insert({ id: 'dev-fail', name: 'd', data: null, networkId, deviceTypeId, isBlocked: false })
    const good = { notification: 'kept-out', deviceId: 'dev-fail', networkId, deviceTypeId, parameters: null }
    const bad = { ...good, notification: null as unknown as string }
    const stored = (): Promise<unknown[]> =>
      store.notifications.query({ scope: FULL_SCOPE, deviceIds: ['dev-fail'], sortField: 'timestamp', take: 100 })
    await assert.rejects(store.transaction((tx) => tx.notifications.insertMany([good, good, bad, good], Date.now())))
    same(await stored(), [], 'no row of the failed batch is stored')
    const [after] = await store.notifications.insertMany([good], Date.now())
    same(await stored(), [after], 'the store writes again after it (and the query above would have seen a row)')
  })

  check('commands: writeMany writes inserts and updates in order, each stamped after the one before (issue #26)', async ({ store }) => {
    const networkId = await store.networks.insert({ name: 'many-net', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'many-type', description: null })
    await store.devices.insert({ id: 'dev-many', name: 'd', data: null, networkId, deviceTypeId, isBlocked: false })
    const input = (command: string): NewCommand => ({
      command, deviceId: 'dev-many', networkId, deviceTypeId, userId: null, parameters: { command },
      lifetime: null, status: null, result: null
    })
    const [earlier] = await store.commands.writeMany([{ kind: 'command', input: input('earlier') }], Date.now())
    const written = await store.commands.writeMany([
      { kind: 'command', input: input('first') },
      { kind: 'command-update', deviceId: 'dev-many', id: earlier!.id, patch: { status: 'Done', result: { ok: true } } },
      { kind: 'command-update', deviceId: 'dev-many', id: 999_999, patch: { status: 'Lost' } },
      { kind: 'command', input: input('second') }
    ], Date.now())
    assert.equal(written.length, 4)
    const [first, updated, missing, second] = written
    assert.equal(missing, undefined, 'an update of a command that is not there answers undefined')
    assert.ok(first!.stamp < updated!.lastUpdated && updated!.lastUpdated < second!.stamp, 'stamps follow the batch')
    same(first, await store.commands.findById(first!.id), 'the first insert is what reads back')
    same(second, await store.commands.findById(second!.id), 'the second insert is what reads back')
    same(updated, await store.commands.findById(earlier!.id), 'the update is what reads back')
    match(updated, { status: 'Done', result: { ok: true }, isUpdated: true })
    same(await store.commands.writeMany([], Date.now()), [], 'an empty batch writes nothing')
    // In a transaction, a write that fails fails the batch: nothing of it is kept (the log's use).
    const stored = async (): Promise<number> => (await store.commands.query({
      scope: FULL_SCOPE, deviceIds: ['dev-many'], sortField: 'timestamp', take: 100
    })).length
    const before = await stored()
    await assert.rejects(store.transaction((tx) => tx.commands.writeMany([
      { kind: 'command', input: input('kept-out') },
      { kind: 'command-update', deviceId: 'dev-many', id: second!.id, patch: { status: 'Done' } },
      { kind: 'command', input: { ...input('bad'), command: null as unknown as string } }
    ], Date.now())))
    assert.equal(await stored(), before, 'no insert of the failed batch is stored')
    assert.equal((await store.commands.findById(second!.id))!.isUpdated, false, 'no update of the failed batch is kept')
  })

  // The message writes and command updates run as the store's query templates, which a dialect may
  // run past Kysely's executor: inside a transaction they must still run on its connection.
  check('messages: writes inside a transaction that rolls back are undone with it', async ({ store }) => {
    const networkId = await store.networks.insert({ name: 'undo-net', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'undo-type', description: null })
    await store.devices.insert({ id: 'dev-undo', name: 'd', data: null, networkId, deviceTypeId, isBlocked: false })
    const base = { deviceId: 'dev-undo', networkId, deviceTypeId }
    const command = await store.commands.insert({ ...base, command: 'kept', userId: null, parameters: null, lifetime: null,
      status: null, result: null }, Date.now())
    await assert.rejects(store.transaction(async (tx) => {
      await tx.notifications.insert({ ...base, notification: 'undone', parameters: null }, Date.now())
      await tx.commands.insert({ ...base, command: 'undone', userId: null, parameters: null, lifetime: null, status: null, result: null },
        Date.now())
      await tx.commands.update('dev-undo', command.id, { status: 'undone' }, Date.now())
      throw new Error('roll back')
    }), /roll back/)
    const query = { scope: FULL_SCOPE, deviceIds: ['dev-undo'], sortField: 'timestamp', take: 100 } as const
    same(await store.notifications.query(query), [], 'the notification is gone')
    same((await store.commands.query(query)).map((c) => c.command), ['kept'], 'the command insert is gone')
    same((await store.commands.findById(command.id))?.status, null, 'the command update is gone')
  })
}

/**
 * With a ring, a store that rings (PostgreSQL) tells each written record its link in the draw chain
 * (`StoreRing.drawn`): at the record's stamp, chained to the stamp drawn before it. Alone on the
 * store, the links of these writes follow each other. A store that does not ring tells none.
 */
function drawChainChecks<R extends object> (
  dialect: string, links: ReadonlyMap<object, DrawLink>, records: readonly R[], stampOf: (record: R) => number
): void {
  if (dialect !== 'postgres') {
    assert.equal(links.size, 0, 'a store without NOTIFY does not ring')
    return
  }
  assert.equal(links.size, records.length, 'every record is drawn')
  const chain = records.map((record) => {
    const link = links.get(record)
    assert.ok(link !== undefined, 'each record its own link')
    assert.equal(link.stamp, stampOf(record), 'the link is at the record\'s stamp')
    assert.ok(link.prev < link.stamp && Number.isSafeInteger(link.nextXid) && link.nextXid > 0, 'a link names the stamp before it')
    return link
  }).sort((a, b) => a.stamp - b.stamp)
  for (let i = 1; i < chain.length; i++) assert.equal(chain[i]!.prev, chain[i - 1]!.stamp, 'the links chain')
}

function settingChecks (check: Register): void {
  check('configuration: put creates then bumps, get, delete', async ({ store }) => {
    assert.equal(await store.configuration.get('key'), undefined)
    same(await store.configuration.put('key', 'one'), { name: 'key', value: 'one', entityVersion: 0 })
    same(await store.configuration.put('key', 'two'), { name: 'key', value: 'two', entityVersion: 1 })
    same(await store.configuration.put('key', 'two'), { name: 'key', value: 'two', entityVersion: 2 })
    same(await store.configuration.put('other', 'x'), { name: 'other', value: 'x', entityVersion: 0 })
    same(await store.configuration.get('key'), { name: 'key', value: 'two', entityVersion: 2 })
    assert.equal(await store.configuration.get('KEY'), undefined, 'names are exact')
    assert.equal(await store.configuration.delete('key'), true)
    assert.equal(await store.configuration.delete('key'), false)
    assert.equal(await store.configuration.get('key'), undefined)
    same(await store.configuration.put('key', 'again'), { name: 'key', value: 'again', entityVersion: 0 }, 'recreated from version 0')
    same(await store.configuration.get('other'), { name: 'other', value: 'x', entityVersion: 0 })
  })

  check('secrets: setIfAbsent keeps the first value, set replaces', async ({ store }) => {
    assert.equal(await store.secrets.get('jwt'), undefined)
    assert.equal(await store.secrets.setIfAbsent('jwt', 'first'), 'first')
    assert.equal(await store.secrets.setIfAbsent('jwt', 'second'), 'first')
    assert.equal(await store.secrets.get('jwt'), 'first')
    await store.secrets.set('jwt', 'third')
    assert.equal(await store.secrets.get('jwt'), 'third')
    await store.secrets.set('fresh', 'value')
    assert.equal(await store.secrets.get('fresh'), 'value')
    const [a, b] = await Promise.all([store.secrets.setIfAbsent('race', 'a'), store.secrets.setIfAbsent('race', 'b')])
    assert.equal(a, b, 'concurrent setIfAbsent calls agree on one value')
  })
}

function pluginAndTransactionChecks (check: Register): void {
  check('plugins: findByTopic', async ({ store }) => {
    assert.equal(await store.plugins.findByTopic('plugin_topic_x'), undefined)
    const db = kysely(store)
    if (db === undefined) return
    // No port inserts plugins yet; write the row directly to check the read path.
    const user = await store.users.insert(newUser('owner'))
    await db.insertInto('plugins').values({
      name: 'p', description: null, topic_name: 'plugin_topic_x', filter: 'command/*/*/*', status: 2, subscription_id: LATE, user_id: user,
      parameters: '{"b":1,"a":2}'
    }).execute()
    const found = await store.plugins.findByTopic('plugin_topic_x')
    same(found, {
      id: found!.id, name: 'p', description: null, topicName: 'plugin_topic_x', filter: 'command/*/*/*', status: 2, subscriptionId: LATE,
      activationCursor: null, userId: user,
      parameters: { b: 1, a: 2 }, grants: { networkIds: 'all', deviceTypeIds: 'all' }
    }, 'a row written without grants (an older version) reaches what its owner does')
    assert.equal(typeof found!.id, 'number')
    assert.equal(JSON.stringify(found!.parameters), '{"b":1,"a":2}')
    await store.users.delete(user)
    assert.equal(await store.plugins.findByTopic('plugin_topic_x'), undefined, 'deleting the owner deletes the plugin')
  })

  check('plugins: grants round-trip, and a damaged grant grants nothing', async ({ store }) => {
    const user = await store.users.insert(newUser('grants'))
    const row = {
      name: 'g', description: null, topicName: 'plugin_topic_g', filter: '*/*/*/*/*', status: 2 as const, subscriptionId: null,
      activationCursor: null, userId: user, parameters: null
    }
    const id = await store.plugins.insert({ ...row, grants: { networkIds: [3, 1], deviceTypeIds: 'all' } })
    same((await store.plugins.findById(id))!.grants, { networkIds: [3, 1], deviceTypeIds: 'all' })
    assert.equal(await store.plugins.update(id, { grants: { networkIds: 'all', deviceTypeIds: [] } }), true)
    same((await store.plugins.findById(id))!.grants, { networkIds: 'all', deviceTypeIds: [] }, 'an empty list stays empty, not all')
    assert.equal(await store.plugins.update(id, { name: 'renamed' }), true)
    same((await store.plugins.findById(id))!.grants, { networkIds: 'all', deviceTypeIds: [] }, 'a patch without grants keeps them')
    const db = kysely(store)
    if (db === undefined) return
    await db.updateTable('plugins').set({ network_grant: '1,x', device_type_grant: ',' }).where('id', '=', id).execute()
    same((await store.plugins.findById(id))!.grants, { networkIds: [], deviceTypeIds: [] })
  })

  check('plugins: an activation\'s cursor round-trips with its subscription id; a damaged one reads as none', async ({ store }) => {
    const user = await store.users.insert(newUser('activation'))
    const id = await store.plugins.insert({
      name: 'a', description: null, topicName: 'plugin_topic_a', filter: '*/*/*/*/*', status: 2, subscriptionId: null,
      activationCursor: null, userId: user, parameters: null, grants: { networkIds: 'all', deviceTypeIds: 'all' }
    })
    const cursor = { clock: LATE, notification: 2 ** 40, command: 7 }
    assert.equal(await store.plugins.update(id, { status: 0, subscriptionId: LATE, activationCursor: cursor }), true)
    same(await store.plugins.findById(id), {
      id, name: 'a', description: null, topicName: 'plugin_topic_a', filter: '*/*/*/*/*', status: 0, subscriptionId: LATE,
      activationCursor: cursor, userId: user, parameters: null, grants: { networkIds: 'all', deviceTypeIds: 'all' }
    }, 'written and read in one row')
    assert.equal(await store.plugins.update(id, { name: 'renamed' }), true)
    same((await store.plugins.findById(id))!.activationCursor, cursor, 'a patch without it keeps it')
    await assert.rejects(store.plugins.update(id, { activationCursor: cursor }), /with its subscription id/)
    assert.equal(await store.plugins.update(id, { status: 1, subscriptionId: null, activationCursor: null }), true)
    assert.equal((await store.plugins.findById(id))!.activationCursor, null)
    const db = kysely(store)
    if (db === undefined) return
    await store.plugins.update(id, { status: 0, subscriptionId: 5, activationCursor: cursor })
    await db.updateTable('plugins').set({ activation_cursor: '5@1.x.3' }).where('id', '=', id).execute()
    assert.equal((await store.plugins.findById(id))!.activationCursor, null, 'damaged')
    await store.plugins.update(id, { status: 0, subscriptionId: 5, activationCursor: cursor })
    // An older version activates again: a new subscription id, the column left as it was.
    await db.updateTable('plugins').set({ subscription_id: 6 }).where('id', '=', id).execute()
    assert.equal((await store.plugins.findById(id))!.activationCursor, null, 'another activation\'s cursor is not this one\'s')
  })

  check('transaction: commit, rollback, nesting', async ({ store }) => {
    const result = await store.transaction(async (tx) => {
      const id = await tx.networks.insert({ name: 'committed', description: null })
      same(await tx.networks.findById(id), { id, name: 'committed', description: null }, 'visible inside')
      return id
    })
    same(
      await store.networks.findById(result), { id: result, name: 'committed', description: null },
      'the result is returned and visible after commit'
    )

    const boom = new Error('boom')
    await assert.rejects(store.transaction(async (tx) => {
      await tx.networks.insert({ name: 'rolled back', description: null })
      await tx.configuration.put('k', 'v')
      throw boom
    }), boom)
    assert.equal(await store.networks.findByName('rolled back'), undefined)
    assert.equal(await store.configuration.get('k'), undefined)

    await assert.rejects(store.transaction(async (tx) => {
      await tx.transaction(async (inner) => {
        await inner.networks.insert({ name: 'inner', description: null })
      })
      assert.ok(await tx.networks.findByName('inner'), 'the nested transaction joined the outer one')
      throw boom
    }), boom)
    assert.equal(await store.networks.findByName('inner'), undefined, 'the outer rollback undoes the nested writes')

    // A constraint error inside a transaction maps to CONFLICT and rolls everything back.
    await rejectsConflict(store.transaction(async (tx) => {
      await tx.networks.insert({ name: 'before conflict', description: null })
      await tx.networks.insert({ name: 'committed', description: null })
    }), 'duplicate inside a transaction')
    assert.equal(await store.networks.findByName('before conflict'), undefined)

    const [x, y] = await Promise.all([
      store.transaction((tx) => tx.networks.insert({ name: 'parallel-x', description: null })),
      store.transaction((tx) => tx.networks.insert({ name: 'parallel-y', description: null }))
    ])
    assert.notEqual(x, y, 'concurrent transactions both commit')
    assert.equal(await store.networks.count('all', { namePattern: 'parallel-%' }), 2)
  })

  check('afterCommit: after commit, never on rollback, at once outside a transaction', async ({ store }) => {
    const calls: string[] = []
    store.afterCommit(() => calls.push('outside'))
    same(calls, ['outside'], 'runs at once outside a transaction')

    await store.transaction(async (tx) => {
      tx.afterCommit(() => calls.push('committed'))
      await tx.transaction(async (inner) => {
        inner.afterCommit(() => calls.push('nested'))
      })
      await tx.networks.insert({ name: 'n', description: null })
      same(calls, ['outside'], 'not yet inside the transaction')
    })
    same(calls, ['outside', 'committed', 'nested'], 'run in order once the outer transaction commits')

    await assert.rejects(store.transaction(async (tx) => {
      tx.afterCommit(() => calls.push('rolled back'))
      throw new Error('rollback')
    }))
    same(calls, ['outside', 'committed', 'nested'], 'never after a rollback')
  })

  check('notify: accepted inside and outside a transaction', async ({ store }) => {
    await store.notify('devicehub_contract', '{"id":1}')
    await store.transaction(async (tx) => {
      await tx.notify('devicehub_contract', '{"id":2}')
      await tx.networks.insert({ name: 'n', description: null })
    })
    assert.ok(await store.networks.findByName('n'), 'notify does not disturb the transaction')
  })
}

/** What the hub tells other instances of (their caches of these rows): `Store.watchOwnWrites`. */
function ownWriteChecks (check: Register): void {
  check('watchOwnWrites: each write of users, networks, device types and devices, in its transaction', async ({ store }) => {
    const told: boolean[] = []
    const off = store.watchOwnWrites(async (tx) => { told.push(tx !== store) })
    const networkId = await store.networks.insert({ name: 'watched', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'watched', description: null })
    await store.devices.findById('none')
    await store.networks.findById(networkId)
    same(told, [false, false], 'writes outside a transaction, none for reads')
    await store.transaction(async (tx) => {
      await tx.devices.insert({ id: 'watched', name: 'w', data: null, networkId, deviceTypeId, isBlocked: false })
      await tx.users.insert(newUser('watched'))
    })
    same(told, [false, false, true, true], 'writes in a transaction, with its store')
    await assert.rejects(store.transaction(async (tx) => {
      off()
      const stop = tx.watchOwnWrites(async () => { throw new Error('cannot tell') })
      try {
        await tx.devices.update('watched', { name: 'rolled back' })
      } finally {
        stop()
      }
    }), /cannot tell/)
    assert.equal((await store.devices.findById('watched'))?.name, 'w', 'a listener failing in a transaction fails it')
    await store.devices.update('watched', { name: 'after off' })
    assert.equal(told.length, 4, 'off() stops it')
  })
}

function purgeAndDurabilityChecks (check: Register): void {
  check('deleted devices: history detached from a namesake at once, purged in batches (issue #16)', async ({ store }) => {
    const device = { id: 'namesake', name: 'd', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false }
    const networkId = await store.networks.insert({ name: 'purge-net', description: null })
    const deviceTypeId = await store.deviceTypes.insert({ name: 'purge-type', description: null })
    const at = { ...device, networkId, deviceTypeId }
    await store.devices.insert(at)
    const old = await store.commands.insert(
      {
        command: 'old', deviceId: 'namesake', networkId, deviceTypeId, userId: null, parameters: null, lifetime: null, status: null,
        result: null
      },
      LATE
    )
    const rows = Array.from({ length: 7 }, () => ({ notification: 'old', deviceId: 'namesake', networkId, deviceTypeId, parameters: null }))
    const oldNotifications = await store.notifications.insertMany(rows, LATE)
    match(await store.commands.findForDevice('namesake', old.id), { command: 'old' })
    assert.equal(await store.devices.delete('namesake'), true)
    await store.devices.insert(at)
    assert.equal(await store.commands.findForDevice('namesake', old.id), undefined, 'the namesake cannot read the old command')
    assert.equal(await store.notifications.findForDevice('namesake', oldNotifications[0]!.id), undefined)
    const scope = { networkIds: 'all', deviceTypeIds: 'all' } as const
    same(await store.commands.query({ scope, deviceIds: ['namesake'], sortField: 'timestamp', take: 100 }), [])
    same(
      await store.feed.notifications({
        selector: { scope, deviceIds: ['namesake'], names: ['old'] }, after: LOG_ORIGIN, upTo: await store.feed.position(), limit: 100
      }),
      []
    )
    assert.equal(await store.commands.update('namesake', old.id, { status: 'x' }, LATE), undefined, 'nor update it')
    const fresh = await store.commands.insert(
      {
        command: 'new', deviceId: 'namesake', networkId, deviceTypeId, userId: null, parameters: null, lifetime: null, status: null,
        result: null
      },
      LATE
    )
    match(await store.commands.findForDevice('namesake', fresh.id), { command: 'new' })

    const [entry] = await store.purges.pending(10)
    match(entry, { deviceId: 'namesake' })
    assert.equal(await store.purges.purgeBatch(entry!, 3), 4, 'a batch: 3 notifications and the command')
    assert.equal(await store.purges.purgeBatch(entry!, 3), 3)
    assert.equal(await store.purges.purgeBatch(entry!, 3), 1)
    assert.equal(await store.purges.purgeBatch(entry!, 3), 0)
    await store.purges.done(entry!.id)
    same(await store.purges.pending(10), [])
    assert.equal(await store.commands.findById(old.id), undefined)
    match(await store.commands.findById(fresh.id), { command: 'new' }, 'the namesake\'s own row stays')

    // Deleting the network queues the histories of its devices (ON DELETE CASCADE).
    await store.networks.delete(networkId)
    match(await store.purges.pending(10), [{ deviceId: 'namesake' }])
  })
  check('durability: a committed write is there after reopening; a rolled-back one is not', async ({ store, reopen }) => {
    if (reopen === undefined) return
    const network = await store.networks.insert({ name: 'kept', description: null })
    await store.transaction(async (tx) => {
      await tx.networks.insert({ name: 'rolled-back', description: null })
      throw new Error('roll back')
    }).catch(() => {})
    const first = await store.notifications.insert({
      notification: 'n', deviceId: 'd', networkId: network, deviceTypeId: null, parameters: null
    })
    const again = await reopen()
    match(await again.networks.findByName('kept'), { id: network, name: 'kept' }, 'the committed network')
    assert.equal(await again.networks.findByName('rolled-back'), undefined, 'the rolled-back one is gone')
    const next = await again.notifications.insert({
      notification: 'n', deviceId: 'd', networkId: network, deviceTypeId: null, parameters: null
    })
    assert.ok(next.id > first.id && next.stamp > first.stamp, 'ids and stamps keep increasing across the reopen')
  })
}

function buildContract (): Record<string, StoreContractCheck> {
  const checks: Record<string, StoreContractCheck> = {}
  const check: Register = (name, fn) => {
    if (name in checks) throw new Error(`two checks named ${name}`)
    checks[name] = fn
  }
  userChecks(check)
  assignmentChecks(check)
  entityAndDeviceChecks(check)
  sessionChecks(check)
  messageChecks(check)
  feedShapeChecks(check)
  batchChecks(check)
  settingChecks(check)
  pluginAndTransactionChecks(check)
  ownWriteChecks(check)
  purgeAndDurabilityChecks(check)
  return checks
}

/**
 * Every check of the contract by name. Give each a fresh store: the checks assume an empty,
 * migrated database and do not clean up.
 */
export const storeContract: Record<string, StoreContractCheck> = buildContract()
