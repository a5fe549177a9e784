import t from 'tap'
import { createTestApp, JWT_SECRET } from '../../fixtures/app.js'

t.test('configuration CRUD (§4)', async (t) => {
  const h = await createTestApp(t)
  const put = await h.request('PUT', '/configuration/my.setting', { body: { value: 'one' } })
  t.equal(put.status, 200)
  t.same(put.body, { name: 'my.setting', value: 'one', entityVersion: 0 })
  const again = await h.request('PUT', '/configuration/my.setting', { body: { value: 2, extra: 'ignored' } })
  t.same(again.body, { name: 'my.setting', value: '2', entityVersion: 1 }, 'numbers become strings; version bumps')
  const bool = await h.request('PUT', '/configuration/flag', { body: { value: true } })
  t.same(bool.body, { name: 'flag', value: 'true', entityVersion: 0 })
  t.same((await h.request('GET', '/configuration/my.setting')).body, { name: 'my.setting', value: '2', entityVersion: 1 })
  const del = await h.request('DELETE', '/configuration/my.setting')
  t.equal(del.status, 204)
  t.equal(del.text, '')
  t.same((await h.request('GET', '/configuration/my.setting')).body, { error: 404, message: 'Requested config with name = my.setting not found in the database' })
  t.same((await h.request('DELETE', '/configuration/my.setting')).body, { error: 404, message: 'Requested config with name = my.setting not found in the database' })
  const exact = await h.request('PUT', '/configuration/' + 'n'.repeat(32), { body: { value: 'v'.repeat(128) } })
  t.equal(exact.status, 200, '32-character name and 128-character value are the limits')
})

t.test('configuration errors', async (t) => {
  const h = await createTestApp(t)
  const client = await h.createUser({ networkIds: [1] })
  const cases: Array<[string, string, object, number, string | RegExp]> = [
    ['PUT', '/configuration/' + 'n'.repeat(33), { body: { value: 'x' } }, 400, "Name cannot be empty. The name's length should not be more than 32 symbols."],
    ['PUT', '/configuration/x', {}, 400, 'Error! Validation failed: Object is null'],
    ['PUT', '/configuration/x', { payload: '' }, 400, 'Error! Validation failed: Object is null'],
    ['PUT', '/configuration/x', { body: {} }, 400, /^Error! Make sure, that the passed object is correct and properly structured\. Validation failed: \nOn property value/],
    ['PUT', '/configuration/x', { body: { value: '' } }, 400, /On property value/],
    ['PUT', '/configuration/x', { body: { value: 'v'.repeat(129) } }, 400, /On property value/],
    ['PUT', '/configuration/x', { body: { value: { a: 1 } } }, 400, 'Invalid request parameters'],
    ['PUT', '/configuration/x', { body: [1] }, 400, 'Invalid request parameters'],
    ['PUT', '/configuration/x', { body: 'text' }, 400, 'Invalid request parameters'],
    ['GET', '/configuration/x', { token: null }, 401, 'Unauthorized'],
    ['PUT', '/configuration/x', { token: null, body: { value: 'x' } }, 401, 'Unauthorized'],
    ['DELETE', '/configuration/x', { token: null }, 401, 'Unauthorized'],
    ['GET', '/configuration/x', { token: client.accessToken }, 403, 'Access is denied'],
    ['PUT', '/configuration/x', { token: client.accessToken, body: { value: 'x' } }, 403, 'Access is denied'],
    ['DELETE', '/configuration/x', { token: client.accessToken }, 403, 'Access is denied']
  ]
  for (const [method, path, options, status, message] of cases) {
    const res = await h.request(method, path, options)
    t.equal(res.status, status, `${method} ${path.slice(0, 40)} ${JSON.stringify(options).slice(0, 40)}`)
    t.equal(res.body.error, status)
    t.match(res.body.message, message)
  }
  t.equal(await h.store.configuration.get('x'), undefined, 'nothing was stored by the refused requests')
})

t.test('the JWT secret is not configuration (D3)', async (t) => {
  const h = await createTestApp(t)
  t.same((await h.request('GET', '/configuration/jwt.secret')).body, { error: 404, message: 'Requested config with name = jwt.secret not found in the database' })
  t.same((await h.request('DELETE', '/configuration/jwt.secret')).body, { error: 404, message: 'Requested config with name = jwt.secret not found in the database' })
  t.same((await h.request('PUT', '/configuration/jwt.secret', { body: { value: 'attacker-secret' } })).body, { error: 403, message: 'Access is denied' })
  t.equal(await h.store.configuration.get('jwt.secret'), undefined)
  // Tokens still verify with the real secret.
  t.equal((await h.request('GET', '/configuration/jwt.secret')).status, 404)
  const responses = await Promise.all(['/info', '/info/cache', '/info/config/cluster', '/configuration/jwt.secret', '/openapi.json'].map((p) => h.request('GET', p)))
  for (const res of responses) t.notMatch(res.text, JWT_SECRET, 'secret never in a response')
})
