/** CONNECT authentication and dh/request round trips over a real MQTT socket (issue #25). */
import t from 'tap'
import { ADMIN, connectMqtt, request, startMqttHarness } from '../fixtures/mqtt.js'

t.test('login with username and password, then dh/request round trips', async (t) => {
  const h = await startMqttHarness(t)
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  const info = await request(client, { action: 'server/info', requestId: 7 })
  t.equal(info.status, 'success')
  t.equal(info.requestId, 7)
  t.equal(info.action, 'server/info')
  t.equal(info.info.restServerUrl, h.server.url)
  const current = await request(client, { action: 'user/getCurrent' })
  t.equal(current.current.login, ADMIN.login)
  const missing = await request(client, { action: 'device/get', deviceId: 'no-such-device' })
  t.equal(missing.status, 'error')
  t.equal(missing.code, 404)
})
