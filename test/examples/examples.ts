import t from 'tap'
import { main as testRig } from '../../examples/test-rig.js'
import { main as embed } from '../../examples/embed-in-fastify.js'

t.test('examples/test-rig.ts starts, authenticates and closes', async (t) => {
  const { url, info } = await testRig()
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+\/api\/rest$/)
  t.equal(info.apiVersion, '4.1.0')
  await t.rejects(fetch(`${url}/info`), 'the server is closed afterwards')
})

t.test('examples/embed-in-fastify.ts mounts the plugin beside host routes', async (t) => {
  const { health, info } = await embed()
  t.same(health, { ok: true })
  t.match(info, { apiVersion: '4.1.0', webSocketServerUrl: /\/iot\/api\/websocket$/ })
})
