import t from 'tap'
import { createTestApp } from '../fixtures/app.js'
import { CORS_HEADERS } from '../../lib/http/cors.js'

t.test('CORS headers on every response; preflight needs no token', async (t) => {
  const h = await createTestApp(t)
  for (const res of [
    await h.request('GET', '/info', { token: null }),
    await h.request('GET', '/configuration/x', { token: null }),
    await h.request('GET', '/no/such/route'),
    await h.request('OPTIONS', '/configuration/x', { token: null, headers: { origin: 'http://example.org', 'access-control-request-method': 'PUT' } })
  ]) {
    for (const [name, value] of Object.entries(CORS_HEADERS)) t.equal(res.headers[name], value, name)
  }
  const preflight = await h.request('OPTIONS', '/configuration/x', { token: null })
  t.equal(preflight.status, 200)
})

t.test('X-HTTP-Method-Override turns a POST into PUT or DELETE', async (t) => {
  const h = await createTestApp(t)
  const put = await h.request('POST', '/configuration/via-override', { headers: { 'x-http-method-override': 'put' }, body: { value: 'v' } })
  t.same(put.body, { name: 'via-override', value: 'v', entityVersion: 0 })
  const del = await h.request('POST', '/configuration/via-override', { headers: { 'X-HTTP-Method-Override': 'DELETE' } })
  t.equal(del.status, 204)
  t.equal(await h.store.configuration.get('via-override'), undefined)
  const ignored = await h.request('POST', '/configuration/x', { headers: { 'x-http-method-override': 'PATCH' }, body: { value: 'v' } })
  t.equal(ignored.status, 405, 'other methods are not overridable: the POST stays a POST')
})

t.test('unknown routes 404, known routes with another method 405', async (t) => {
  const h = await createTestApp(t)
  t.same((await h.request('GET', '/no/such/route')).body, { error: 404, message: 'HTTP 404 Not Found' })
  t.same((await h.app.inject({ method: 'GET', url: '/elsewhere' })).json(), { error: 404, message: 'HTTP 404 Not Found' }, 'outside the base path too')
  t.same((await h.request('POST', '/configuration/x')).body, { error: 405, message: 'HTTP 405 Method Not Allowed' })
  t.same((await h.request('DELETE', '/info')).body, { error: 405, message: 'HTTP 405 Method Not Allowed' })
  t.same((await h.request('PUT', '/token', { body: {} })).body, { error: 405, message: 'HTTP 405 Method Not Allowed' })
  t.equal((await h.request('GET', '/info/')).status, 200, 'trailing slash tolerated')
})

t.test('bodies: JSON only, empty means absent, limits enforced, never a 500', async (t) => {
  const h = await createTestApp(t)
  const noType = await h.app.inject({ method: 'PUT', url: '/api/rest/configuration/plain', headers: { authorization: `Bearer ${h.adminToken}` }, payload: '{"value":"no content type"}' })
  t.same(noType.json(), { name: 'plain', value: 'no content type', entityVersion: 0 }, 'no Content-Type is read as JSON')
  const xml = await h.request('PUT', '/configuration/x', { payload: '<value/>', headers: { 'content-type': 'application/xml' } })
  t.same(xml.body, { error: 415, message: 'HTTP 415 Unsupported Media Type' })
  const text = await h.request('PUT', '/configuration/x', { payload: 'value', headers: { 'content-type': 'text/plain' } })
  t.equal(text.status, 415)
  const charset = await h.request('PUT', '/configuration/cs', { payload: '{"value":"x"}', headers: { 'content-type': 'application/json; charset=utf-8' } })
  t.equal(charset.status, 200)
  const empty = await h.request('PUT', '/configuration/x', { payload: '', headers: { 'content-type': 'application/json' } })
  t.same(empty.body, { error: 400, message: 'Error! Validation failed: Object is null' }, 'empty JSON body = no body (R11)')
  for (const payload of ['[1,2]', '"text"', '42', 'true', '{"value":', '{"__proto__":{"polluted":true},"value":"x"}']) {
    const res = await h.request('PUT', '/configuration/x', { payload })
    t.equal(res.status, 400, payload)
    t.equal(res.body.message, 'Invalid request parameters', payload)
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')
  const huge = await h.request('PUT', '/configuration/x', { body: { value: 'x'.repeat(2 * 1024 * 1024) } })
  t.equal(huge.status, 413)
  t.same(huge.body, { error: 413, message: 'Request body is too large' })
  t.equal(await h.store.configuration.get('x'), undefined, 'nothing stored by refused requests')
})

t.test('the OpenAPI document describes the routes', async (t) => {
  const h = await createTestApp(t)
  const res = await h.request('GET', '/openapi.json', { token: null })
  t.equal(res.status, 200)
  t.equal(res.body.openapi, '3.0.3')
  t.ok(res.body.paths['/token'], 'token route documented')
  t.ok(res.body.paths['/configuration/{name}'].put.requestBody, 'bodies documented')
  t.ok(res.body.paths['/info'].get.responses['200'], 'responses documented')
})

t.test('errors raised before routing keep the contract body', async (t) => {
  const h = await createTestApp(t)
  const long = await h.request('PUT', `/device/${'a'.repeat(200)}`, { body: { name: 'x' } })
  t.same(long.body, { error: 400, message: 'Field cannot be empty. The length of guid should not be more than 48 symbols.' }, 'a long id reaches the device rules')
  const huge = await h.request('GET', `/device/${'a'.repeat(2000)}`)
  t.same(huge.body, { error: 414, message: 'HTTP 414 URI Too Long' })
  const badEncoding = await h.request('GET', '/device/%E0%A4%A')
  t.same(badEncoding.body, { error: 400, message: 'Invalid request parameters' })
})

t.test('a literal null body is no body on every route that takes one', async (t) => {
  const h = await createTestApp(t)
  const doc = (await h.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> }
  let checked = 0
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const method of Object.keys(methods)) {
      if (method !== 'post' && method !== 'put') continue
      const url = path.replace(/\{[^}]+\}/g, '1')
      const res = await h.request(method.toUpperCase(), url, { payload: 'null' })
      t.ok(res.status >= 200 && res.status < 500, `${method.toUpperCase()} ${url} -> ${res.status}`)
      checked++
    }
  }
  t.ok(checked >= 15, `checked ${checked} routes`)
  const token = await h.request('POST', '/token', { token: null, payload: 'null' })
  t.same(token.body, { error: 400, message: 'Error! Validation failed: Object is null' })
})
