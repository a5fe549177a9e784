/**
 * devicehub's `search` on `GET /device` and `GET /device/count`, over a real socket: a
 * case-insensitive substring of the name or the id, LIKE wildcards taken literally, within the
 * caller's scope, next to DeviceHive's case-sensitive `namePattern`. Runs on SQLite and, with
 * DEVICEHUB_TEST_PG_URL, on PostgreSQL.
 */
import t from 'tap'
import { DeviceMessages, SEARCH_MAX_LENGTH } from '../../../lib/core/devices/device-service.js'
import { BASE, createTestApp } from '../../fixtures/app.js'
import type { TestApp } from '../../fixtures/app.js'
import { registry } from '../../fixtures/registry.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface Answer { status: number, body: any } // eslint-disable-line @typescript-eslint/no-explicit-any

async function served (t: Tap): Promise<{ h: TestApp, get: (path: string, query: string, token?: string) => Promise<Answer> }> {
  const h = await createTestApp(t)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as { port: number }
  const get = async (path: string, query: string, token = h.adminToken): Promise<Answer> => {
    const res = await fetch(`http://127.0.0.1:${port}${BASE}${path}?${query}`, { headers: { authorization: `Bearer ${token}` } })
    return { status: res.status, body: await res.json() }
  }
  return { h, get }
}

const DEVICES: Array<[string, string]> = [
  ['thermo-1', 'Thermostat Hall'],
  ['THERM-X', 'Boiler'],
  ['lamp-1', 'Kitchen lamp'],
  ['pct-1', '50% off'],
  ['under-1', 'a_b'],
  ['slash-1', 'back\\slash'],
  ['uni-1', 'Ärger']
]

t.test('search: name or id, any case, wildcards literal, with list and count agreeing', async (t) => {
  const { h, get } = await served(t)
  const r = registry(h)
  for (const [id, name] of DEVICES) await r.device(id, { name })

  async function ids (query: string): Promise<string[]> {
    const list = await get('/device', query)
    t.equal(list.status, 200, `GET /device?${query}`)
    const count = await get('/device/count', query)
    t.same(count, { status: 200, body: { count: list.body.length } }, `count agrees for ${query}`)
    return (list.body as Array<{ id: string }>).map((d) => d.id).sort()
  }
  const search = (text: string): string => new URLSearchParams({ search: text }).toString()

  t.same(await ids(search('therm')), ['THERM-X', 'thermo-1'], 'lower case finds a name (Thermostat) and an id (THERM-X)')
  t.same(await ids(search('THERMOSTAT')), ['thermo-1'], 'upper case finds a mixed-case name')
  t.same(await ids(search('MO-1')), ['thermo-1'], 'part of an id, any case')
  t.same(await ids(search('KITCHEN LAMP')), ['lamp-1'], 'a space inside the text')
  t.same(await ids(search('%')), ['pct-1'], '% is a percent sign, not a wildcard')
  t.same(await ids(search('_')), ['under-1'], '_ is an underscore, not a wildcard')
  t.same(await ids(search('\\')), ['slash-1'], 'a backslash is a backslash')
  t.same(await ids(search('k\\s')), ['slash-1'])
  t.same(await ids(search('Ärger')), ['uni-1'], 'a non-ASCII name finds itself')
  t.same(await ids(search('nothing-like-this')), [], 'no match')
  t.same(await ids(search('')), DEVICES.map(([id]) => id).sort(), 'an empty search is no search')
  t.same(await ids(search('   ')), DEVICES.map(([id]) => id).sort(), 'a blank search is no search')

  // DeviceHive's namePattern keeps its case-sensitive LIKE meaning, and combines with search.
  t.same(await ids('namePattern=therm%25'), [], 'namePattern stays case-sensitive')
  t.same(await ids('namePattern=Therm%25'), ['thermo-1'])
  t.same(await ids('namePattern=%25l%25&search=therm'), ['THERM-X', 'thermo-1'], 'both filters apply')
  t.same(await ids('namePattern=B%25&search=therm'), ['THERM-X'])

  // Paging over a search: take/skip with a sort, and the total stays the count of all matches.
  const page = await get('/device', 'search=1&sortField=name&take=2&skip=1')
  t.same(page.body.map((d: { name: string }) => d.name), ['Kitchen lamp', 'Thermostat Hall'], 'a page of the sorted matches')
  t.same((await get('/device/count', 'search=1')).body, { count: 6 }, 'thermo-1, lamp-1, pct-1, under-1, slash-1, uni-1')
})

t.test('search stays inside the caller scope', async (t) => {
  const { h, get } = await served(t)
  const r = registry(h)
  const lab = await r.network('Lab')
  await r.device('therm-lab', { name: 'Lab thermometer', networkId: lab })
  await r.device('therm-home', { name: 'Home thermometer' })
  const { accessToken } = await h.createUser({ networkIds: [lab] })
  const list = await get('/device', 'search=THERM', accessToken)
  t.same(list.body.map((d: { id: string }) => d.id), ['therm-lab'], 'only the network the user is assigned to')
  t.same((await get('/device/count', 'search=THERM', accessToken)).body, { count: 1 })
})

t.test('bad search values answer 400 with a message, never 500', async (t) => {
  const { get } = await served(t)
  const longest = 'x'.repeat(SEARCH_MAX_LENGTH)
  t.same(await get('/device', `search=${longest}`), { status: 200, body: [] }, `${SEARCH_MAX_LENGTH} characters are fine`)
  for (const path of ['/device', '/device/count']) {
    t.same(await get(path, `search=${longest}x`), { status: 400, body: { error: 400, message: DeviceMessages.searchTooLong } }, `${path}: too long`)
    t.equal(DeviceMessages.searchTooLong, 'The search text must be at most 128 characters.')
    const twice = await get(path, 'search=a&search=b')
    t.equal(twice.status, 400, `${path}: given twice`)
    t.type(twice.body.message, 'string')
  }
})
