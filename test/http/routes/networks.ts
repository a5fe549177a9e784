import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import type { Store } from '../../../lib/core/ports.js'
import { createTestApp } from '../../fixtures/app.js'
import { registry } from '../../fixtures/registry.js'
import { openTestStore } from '../../fixtures/store.js'

const SAMPLE = { id: 1, name: 'Sample Network', description: 'A DeviceHive Sample Network' }

t.test('create, read, list, update and delete a network with exact views', async (t) => {
  const h = await createTestApp(t)
  const created = await h.request('POST', '/network', { body: { name: 'Lab', description: 'Bench', id: 77, unknown: true } })
  t.equal(created.status, 201)
  t.same(created.body, { id: 2 })

  const got = await h.request('GET', '/network/2')
  t.equal(got.status, 200)
  t.same(got.body, { id: 2, name: 'Lab', description: 'Bench', devices: [] })

  await registry(h).device('dev-a', { networkId: 2, data: { b: 1, a: [2] } })
  const withDevice = await h.request('GET', '/network/2')
  t.same(withDevice.body, { id: 2, name: 'Lab', description: 'Bench', devices: [{ id: 'dev-a', name: 'dev-a', data: { b: 1, a: [2] }, isBlocked: false }] })
  t.equal(withDevice.text.indexOf('"b":1') < withDevice.text.indexOf('"a":[2]'), true, 'data key order kept')

  const list = await h.request('GET', '/network')
  t.equal(list.status, 200)
  t.same(list.body, [SAMPLE, { id: 2, name: 'Lab', description: 'Bench' }])

  const noDescription = await h.request('POST', '/network', { body: { name: 'Bare' } })
  t.same((await h.request('GET', `/network/${noDescription.body.id}`)).body, { id: 3, name: 'Bare', description: null, devices: [] })

  const put = await h.request('PUT', '/network/2', { body: { name: 'Lab 2' } })
  t.equal(put.status, 204)
  t.equal(put.text, '')
  t.same((await h.request('GET', '/network/2')).body.description, 'Bench', 'absent description unchanged')
  await h.request('PUT', '/network/2', { body: { description: null } })
  t.same((await h.request('GET', '/network/2')).body.description, 'Bench', 'null description unchanged')
  await h.request('PUT', '/network/2', { body: { description: '' } })
  t.same((await h.request('GET', '/network/2')).body.description, null, 'empty description clears it')
  t.equal((await h.request('PUT', '/network/2')).status, 204, 'missing body is {}')
  t.equal((await h.request('GET', '/network/2')).body.name, 'Lab 2')

  const del = await h.request('DELETE', '/network/3')
  t.equal(del.status, 204)
  t.same(await h.request('GET', '/network/3').then((r) => [r.status, r.body]), [404, { error: 404, message: 'Network with id = 3 not found' }])
})

t.test('network errors answer the contract messages', async (t) => {
  const h = await createTestApp(t)
  const cases: Array<[string, string, unknown, number, string]> = [
    ['POST', '/network', { name: 'Sample Network' }, 403, 'Network cannot be created. Network with such name already exists'],
    ['POST', '/network', { users: 'invalid', invalidProp: 1 }, 400, 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property name (value: null): name field cannot be null. ; '],
    ['POST', '/network', undefined, 400, 'Error! Validation failed: Object is null'],
    ['POST', '/network', { name: '' }, 400, 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property name (value: ): Field cannot be empty. The length of name should not be more than 128 symbols. ; '],
    ['POST', '/network', { name: 'x'.repeat(129) }, 400, `Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property name (value: ${'x'.repeat(129)}): Field cannot be empty. The length of name should not be more than 128 symbols. ; `],
    ['POST', '/network', { name: 'ok', description: 'd'.repeat(129) }, 400, `Error! Make sure, that the passed object is correct and properly structured. Validation failed: \nOn property description (value: ${'d'.repeat(129)}): The length of description should not be more than 128 symbols. ; `],
    ['POST', '/network', { name: { a: 1 } }, 400, 'Invalid request parameters'],
    ['POST', '/network', [1, 2], 400, 'Invalid request parameters'],
    ['GET', '/network/999999', undefined, 404, 'Network with id = 999999 not found'],
    ['GET', '/network/0', undefined, 404, 'Network with id = 0 not found'],
    // A path id that is not an integer is an unknown route, as in DeviceHive (JAX-RS).
    ['GET', '/network/abc', undefined, 404, 'HTTP 404 Not Found'],
    ['GET', '/network/-1', undefined, 404, 'Network with id = -1 not found'],
    ['GET', '/network/99999999999999999999', undefined, 404, 'HTTP 404 Not Found'],
    ['DELETE', '/network/1.5', undefined, 404, 'HTTP 404 Not Found'],
    ['PUT', '/network/999999', { name: 'x' }, 404, 'Network with id = 999999 not found'],
    ['PUT', '/network/999999', undefined, 404, 'Network with id = 999999 not found'],
    ['DELETE', '/network/999999', undefined, 404, 'Network with id = 999999 not found'],
    ['GET', '/network?sortField=bogus', undefined, 400, 'Invalid request parameters'],
    ['GET', '/network?sortField=name&sortOrder=sideways', undefined, 400, 'Unparseable sort order : sideways'],
    ['GET', '/network?sortOrder=up', undefined, 400, 'Unparseable sort order : up'],
    ['GET', '/network?take=-1', undefined, 400, 'Invalid request parameters'],
    ['GET', '/network?skip=-1', undefined, 400, 'Invalid request parameters'],
    ['GET', '/network?take=abc', undefined, 400, 'Invalid request parameters'],
    ['GET', '/network?skip=99999999999999999999', undefined, 400, 'Invalid request parameters']
  ]
  const before = await registry(h).snapshot()
  for (const [method, path, body, status, message] of cases) {
    const res = await h.request(method, path, { body })
    t.equal(res.status, status, `${method} ${path} status`)
    t.same(res.body, { error: status, message }, `${method} ${path} body`)
  }
  t.same(await registry(h).snapshot(), before, 'nothing changed')

  const unauth = await h.request('GET', '/network', { token: null })
  t.same([unauth.status, unauth.body], [401, { error: 401, message: 'Unauthorized' }])
  const noAction = registry(h).token(1, [Action.GetDevice], ['*'], ['*'])
  for (const [method, path] of [['GET', '/network'], ['GET', '/network/count'], ['GET', '/network/1'], ['POST', '/network'], ['PUT', '/network/1'], ['DELETE', '/network/1']] as const) {
    const res = await h.request(method, path, { token: noAction, body: method === 'GET' ? undefined : { name: 'n' } })
    t.same([res.status, res.body], [403, { error: 403, message: 'Access is denied' }], `${method} ${path} without the action`)
  }
})

t.test('renaming to a taken name is 403 with the duplicate message (R5)', async (t) => {
  const h = await createTestApp(t)
  const id = await registry(h).network('Second')
  const res = await h.request('PUT', `/network/${id}`, { body: { name: 'Sample Network' } })
  t.same([res.status, res.body], [403, { error: 403, message: 'Network cannot be created. Network with such name already exists' }])
  t.equal((await h.request('PUT', `/network/${id}`, { body: { name: 'Second' } })).status, 204, 'keeping its own name is fine')
  t.equal((await h.request('GET', `/network/${id}`)).body.name, 'Second')
})

t.test('a store conflict on insert becomes the duplicate message', async (t) => {
  const real = await openTestStore(t)
  // The real store, with the duplicate lookup slowed down so that both requests pass the
  // check before either inserts: the unique constraint then decides.
  const slowLookup = async (name: string) => {
    const found = await real.networks.findByName(name)
    await new Promise((resolve) => setTimeout(resolve, 20))
    return found
  }
  // A property of its own: the store's repositories are getters (built on first use).
  const store = Object.create(real, { networks: { value: { ...real.networks, findByName: slowLookup } } }) as Store
  const h = await createTestApp(t, { store })
  const [a, b] = await Promise.all([
    h.request('POST', '/network', { body: { name: 'Race' } }),
    h.request('POST', '/network', { body: { name: 'Race' } })
  ])
  t.same([a.status, b.status].sort(), [201, 403])
  const loser = a.status === 403 ? a : b
  t.same(loser.body, { error: 403, message: 'Network cannot be created. Network with such name already exists' })
  t.same((await h.request('GET', '/network/count?name=Race')).body, { count: 1 })
  const id = await registry(h).network('Other')
  const renames = await Promise.all([
    h.request('PUT', `/network/${id}`, { body: { name: 'Race 2' } }),
    h.request('PUT', '/network/1', { body: { name: 'Race 2' } })
  ])
  t.same(renames.map((r) => r.status).sort(), [204, 403], 'renames race the same way (R5)')
})

t.test('filters, sorting, paging and counts agree', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  for (const name of ['alpha', 'Alpine', 'beta', 'al_x', 'gamma']) await r.network(name)
  const names = async (query: string): Promise<string[]> => {
    const res = await h.request('GET', `/network${query}`)
    t.equal(res.status, 200, query)
    return res.body.map((n: { name: string }) => n.name)
  }
  const count = async (query: string): Promise<number> => (await h.request('GET', `/network/count${query}`)).body.count
  t.same(await names(''), ['Sample Network', 'alpha', 'Alpine', 'beta', 'al_x', 'gamma'])
  t.equal(await count(''), 6)
  t.same(await names('?name=alpha'), ['alpha'])
  t.equal(await count('?name=alpha'), 1)
  t.same(await names('?name=ALPHA'), [], 'exact and case-sensitive')
  t.same(await names('?namePattern=al%25'), ['alpha', 'al_x'], 'LIKE is case-sensitive')
  t.equal(await count('?namePattern=al%25'), 2)
  t.same(await names('?namePattern=%25l_h%25'), ['alpha'])
  t.same(await names('?sortField=name'), ['Alpine', 'Sample Network', 'al_x', 'alpha', 'beta', 'gamma'])
  t.same(await names('?sortField=NAME&sortOrder=desc'), ['gamma', 'beta', 'alpha', 'al_x', 'Sample Network', 'Alpine'])
  t.same(await names('?sortField=id&sortOrder=DESC&take=2'), ['gamma', 'al_x'])
  t.same(await names('?take=2&skip=1'), ['alpha', 'Alpine'])
  t.same(await names('?skip=5'), ['gamma'])
  t.same(await names('?take=0'), [])
  t.same(await names('?take=99999999999999999999&skip=4'), ['al_x', 'gamma'], 'a huge take is capped, not refused')
  t.same(await names('?sortOrder=DESC'), ['Sample Network', 'alpha', 'Alpine', 'beta', 'al_x', 'gamma'], 'sortOrder alone does not sort')
})

t.test('take is capped by maxTake (R10)', async (t) => {
  const h = await createTestApp(t, { limits: { maxTake: 2 } })
  const r = registry(h)
  await r.network('n2')
  await r.network('n3')
  t.equal((await h.request('GET', '/network')).body.length, 2, 'absent take means maxTake')
  t.equal((await h.request('GET', '/network?take=50')).body.length, 2, 'larger take is capped')
  t.equal((await h.request('GET', '/network/count')).body.count, 3, 'count is not paged')
})

t.test('delete refuses while devices remain, force cascades (§8)', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const net = await r.network('Doomed')
  await r.device('doomed-1', { networkId: net })
  await r.device('doomed-2', { networkId: net })
  await r.device('survivor', { networkId: 1 })
  const client = await h.createUser({ networkIds: [net] })

  const refused = await h.request('DELETE', `/network/${net}`)
  t.same([refused.status, refused.body], [400, { error: 400, message: 'There are the following devices within this network: doomed-1, doomed-2. Please review and delete them first.' }])
  t.equal((await h.request('DELETE', `/network/${net}?force=false`)).status, 400)
  t.equal((await h.request('GET', '/device/doomed-1')).status, 200)

  const forced = await h.request('DELETE', `/network/${net}?force=true`)
  t.equal(forced.status, 204)
  t.equal((await h.request('GET', `/network/${net}`)).status, 404)
  t.same((await h.request('GET', '/device/doomed-1')).body, { error: 404, message: 'Device with such deviceId = doomed-1 not found' })
  t.equal((await h.request('GET', '/device/doomed-2')).status, 404)
  t.equal((await h.request('GET', '/device/survivor')).status, 200, 'other networks keep their devices')
  t.same(await h.store.users.networkIds(client.user.id), [], 'user assignments removed')
  t.ok(await h.store.users.findById(client.user.id), 'the user is kept')
})

t.test('huge and odd input is refused or harmless, never a 500', async (t) => {
  const h = await createTestApp(t)
  const r = registry(h)
  const before = await r.snapshot()
  const huge = 'n'.repeat(100_000)
  const post = await h.request('POST', '/network', { body: { name: huge } })
  t.equal(post.status, 400)
  t.match(post.body.message, /^Error! Make sure, that the passed object is correct and properly structured\. Validation failed: /)
  t.equal((await h.request('PUT', '/network/1', { body: { name: huge } })).status, 400)
  t.same((await h.request('PUT', '/network/1', { body: { name: '' } })).body.error, 400)
  t.same((await h.request('PUT', '/network/1', { body: { name: 5 } })).status, 204, 'numbers are read as text, as Java does')
  t.equal((await h.request('GET', '/network/1')).body.name, '5')
  await h.request('PUT', '/network/1', { body: { name: 'Sample Network' } })
  for (const query of [`?name=${'q'.repeat(5000)}`, `?namePattern=${'_'.repeat(1000)}`, '?name=%27%3B%20DROP%20TABLE%20networks%3B--', '?namePattern=%5C']) {
    const res = await h.request('GET', `/network${query}`)
    t.same([res.status, res.body], [200, []], query.slice(0, 40))
    t.same((await h.request('GET', `/network/count${query}`)).body, { count: 0 })
  }
  // SQLite refuses LIKE patterns over 50,000 bytes; patterns are bounded well before that.
  for (const path of ['/network', '/network/count', '/devicetype', '/device', '/device/count', '/user', '/user/count']) {
    const param = path.startsWith('/user') ? 'loginPattern' : 'namePattern'
    t.same((await h.request('GET', `${path}?${param}=${'%25'.repeat(60_000)}`)).body, { error: 400, message: 'Invalid request parameters' }, `${path} huge pattern`)
  }
  t.same((await h.request('GET', '/network?take=1.5')).status, 400)
  t.same((await h.request('GET', '/network?force=yes')).status, 200, 'unknown query parameters are ignored')
  t.same((await h.request('DELETE', '/network/1?force=maybe')).body, { error: 400, message: 'Invalid request parameters' })
  t.same((await h.request('POST', '/network', { payload: 'not json' })).body, { error: 400, message: 'Invalid request parameters' })
  t.same((await h.request('POST', '/network', { payload: '"a string"' })).body, { error: 400, message: 'Invalid request parameters' })
  t.same(await r.snapshot(), before, 'nothing changed')
})

t.test('device and user lists are capped by maxTake too (R10)', async (t) => {
  const h = await createTestApp(t, { limits: { maxTake: 2 } })
  const r = registry(h)
  for (const id of ['c1', 'c2', 'c3']) await r.device(id)
  t.same((await h.request('GET', '/device')).body.map((d: { id: string }) => d.id), ['c1', 'c2'])
  t.same((await h.request('GET', '/device?take=10&skip=1')).body.map((d: { id: string }) => d.id), ['c2', 'c3'])
  t.same((await h.request('GET', '/device/count')).body, { count: 3 })
  await h.createUser({})
  await h.createUser({})
  t.equal((await h.request('GET', '/user?take=100')).body.length, 2)
  t.same((await h.request('GET', '/user/count')).body, { count: 3 })
  await r.deviceType('t2')
  await r.deviceType('t3')
  t.equal((await h.request('GET', '/devicetype')).body.length, 2)
  t.same((await h.request('GET', '/devicetype/count')).body, { count: 3 })
})
