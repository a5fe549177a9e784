import t from 'tap'
import { createDeviceHub } from '../../lib/core/devicehub.js'
import { verifyPassword } from '../../lib/core/auth/passwords.js'
import type { Store } from '../../lib/core/ports.js'
import { openTestStore } from '../fixtures/store.js'

t.test('the first start creates the admin, network 1 and device type 1 (D4, R1)', async (t) => {
  const store = await openTestStore(t)
  const hub = await createDeviceHub({ store })
  t.equal(hub.bootstrap.created, true)
  t.equal(hub.bootstrap.adminLogin, 'dhadmin')
  t.type(hub.bootstrap.generatedPassword, 'string')
  const admin = await store.users.findById(1)
  t.match(admin, { id: 1, login: 'dhadmin', role: 0, status: 0, allDeviceTypesAvailable: true, introReviewed: false, lastLogin: null, data: null })
  t.equal((await verifyPassword(hub.bootstrap.generatedPassword!, admin!.passwordHash)).ok, true, 'the printed password works')
  t.notMatch(admin!.passwordHash, hub.bootstrap.generatedPassword!, 'never stored in clear')
  t.same(await store.networks.findById(1), { id: 1, name: 'Sample Network', description: 'A DeviceHive Sample Network' })
  t.same(await store.deviceTypes.findById(1), { id: 1, name: 'Default Device Type', description: 'Default DeviceHive device type' })
  t.same(await store.users.networkIds(1), [1])
  t.same(await store.users.deviceTypeIds(1), [1])
  t.equal(await store.networks.count('all', {}), 1, 'nothing else')
  t.equal(await store.deviceTypes.count('all', {}), 1)
  t.equal(await store.configuration.get('jwt.secret'), undefined, 'no jwt.secret configuration row (D3)')
  t.equal(await store.configuration.get('user.login.lastTimeout'), undefined, 'built-in default, not a row (R1)')
  t.type(await store.secrets.get('jwt.secret'), 'string', 'a generated secret is kept internally')

  const again = await createDeviceHub({ store, admin: { password: 'another-password' } })
  t.same(again.bootstrap, { created: false, adminLogin: 'dhadmin' }, 'idempotent')
  t.equal(await store.users.count({}), 1)
  t.equal((await verifyPassword('another-password', (await store.users.findById(1))!.passwordHash)).ok, false, 'a later --admin-password does not reset the admin')
})

t.test('admin login and password options', async (t) => {
  const store = await openTestStore(t)
  const hub = await createDeviceHub({ store, admin: { login: '  operator  ', password: 'operator-password' } })
  t.same(hub.bootstrap, { created: true, adminLogin: 'operator' }, 'a given password is not echoed back')
  t.equal((await hub.tokens.login('operator', 'operator-password')).accessToken.split('.').length, 3)
  await t.rejects(createDeviceHub({ store: await openTestStore(t), admin: { password: 'short' } }), /6 to 128/)
  await t.rejects(createDeviceHub({ store: await openTestStore(t), admin: { login: 'ab' } }), /3 to 128/)
})

t.test('the JWT secret: configured, else stored, else generated (D3)', async (t) => {
  const store = await openTestStore(t)
  const first = await createDeviceHub({ store })
  const stored = await store.secrets.get('jwt.secret')
  const { accessToken } = await first.tokens.issueForUser(1)
  const second = await createDeviceHub({ store })
  t.equal(await store.secrets.get('jwt.secret'), stored, 'kept across starts')
  t.ok(await second.tokens.authenticate(accessToken), 'tokens survive a restart')
  const configured = await createDeviceHub({ store, jwtSecret: 'an-operator-chosen-secret' })
  await t.rejects(configured.tokens.authenticate(accessToken), { code: 'UNAUTHENTICATED' }, 'a configured secret wins')
})

t.test('two instances starting together on one empty database bootstrap once', async (t) => {
  const { join } = await import('node:path')
  const { openSqliteStore } = await import('../../lib/store/dialects/sqlite.js')
  const { openPostgresStore } = await import('../../lib/store/dialects/postgres.js')
  const { dropSchema, testPostgresUrl, uniqueSchemaName } = await import('../fixtures/store.js')
  const url = testPostgresUrl()
  const schema = uniqueSchemaName()
  const file = join(t.testdir(), 'race.db')
  const open = async (): Promise<Store> => url === undefined ? openSqliteStore(file) : openPostgresStore(url, { schema, maxConnections: 2 })
  const a = await open()
  const b = await open()
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await a.close()
    await b.close()
  }
  // The stores close in the body, not only in a teardown: once under load the test directory's
  // removal met files still being written by the open connections (ENOTEMPTY).
  t.teardown(async () => {
    await close()
    if (url !== undefined) await dropSchema(url, schema)
  })
  const [first, second] = await Promise.all([createDeviceHub({ store: a }), createDeviceHub({ store: b })])
  t.equal([first.bootstrap.created, second.bootstrap.created].filter(Boolean).length, 1, 'exactly one start created the data')
  t.equal(await a.users.count({}), 1)
  t.equal(await a.networks.count('all', {}), 1)
  await close()
})
