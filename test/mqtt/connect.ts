/** CONNECT authentication and dh/request round trips over a real MQTT socket (issue #25). */
import t from 'tap'
import WebSocket from 'ws'
import { ADMIN, addUser, closed, connectMqtt, request, startMqttHarness, subscribeGranted } from '../fixtures/mqtt.js'

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
  const network = await request(client, { action: 'network/insert', network: { name: `mqtt-net-${process.pid}` } })
  t.equal(network.status, 'success')
  const listed = await request(client, { action: 'network/list' })
  t.ok(listed.networks.some((n: { id: number }) => n.id === network.network.id), 'the insert is visible through the same core')
  const missing = await request(client, { action: 'device/get', deviceId: 'no-such-device' })
  t.match(missing, { action: 'device/get', status: 'error', code: 404 })
  const unknown = await request(client, { action: 'no/such' })
  t.match(unknown, { status: 'error', code: 400, error: 'Illegal argument: no/such' })
})

t.test('an access token as the password', async (t) => {
  const h = await startMqttHarness(t)
  const client = await connectMqtt(t, h.url, { username: 'token', password: h.adminToken })
  t.equal((await request(client, { action: 'user/getCurrent' })).current.id, 1)
})

t.test('refused logins are CONNACK refusals, and the server goes on', async (t) => {
  const h = await startMqttHarness(t)
  await t.rejects(connectMqtt(t, h.url, { username: ADMIN.login, password: 'wrong-password' }), { code: 4 }, 'bad username or password')
  await t.rejects(connectMqtt(t, h.url, { username: 'nobody', password: 'x' }), { code: 4 })
  await t.rejects(connectMqtt(t, h.url, { username: ADMIN.login }), { code: 4 }, 'a username without a password')
  await t.rejects(connectMqtt(t, h.url, { username: 'token', password: 'eyJhbGciOiJIUzI1NiJ9.eyJ4IjoxfQ.bad' }), { code: 5 }, 'a bad token: not authorized')
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  t.ok(client.connected)
})

t.test('anonymous, then token and authenticate actions', async (t) => {
  const h = await startMqttHarness(t)
  const client = await connectMqtt(t, h.url)
  t.same(await subscribeGranted(client, ['dh/notification/#']), [128], 'no DeviceHive subscription before authenticating')
  const denied = await request(client, { action: 'user/getCurrent' })
  t.match(denied, { status: 'error', code: 401 })
  const tokens = await request(client, { action: 'token', login: ADMIN.login, password: ADMIN.password })
  t.equal(tokens.status, 'success')
  const authenticated = await request(client, { action: 'authenticate', token: tokens.accessToken })
  t.equal(authenticated.status, 'success')
  t.equal((await request(client, { action: 'user/getCurrent' })).current.login, ADMIN.login)
  t.same(await subscribeGranted(client, ['dh/notification/#']), [0])
})

t.test('a client id is not taken over by another user; the same user may take it over', async (t) => {
  const h = await startMqttHarness(t)
  const user = await addUser(h, `dave-${process.pid}`, [])
  const first = await connectMqtt(t, h.url, { clientId: 'shared-id', username: user.login, password: user.password })
  await t.rejects(connectMqtt(t, h.url, { clientId: 'shared-id', username: ADMIN.login, password: ADMIN.password }), { code: 2 })
  t.ok(first.connected, 'the first session goes on')
  const replaced = closed(first)
  await connectMqtt(t, h.url, { clientId: 'shared-id', username: user.login, password: user.password })
  await replaced
})

t.test('response topics are the client\'s own; other topics are refused', async (t) => {
  const h = await startMqttHarness(t)
  const client = await connectMqtt(t, h.url, { username: ADMIN.login, password: ADMIN.password })
  t.same(await subscribeGranted(client, ['dh/response/user/get@someone-else', 'sensors/#', '#', '$SYS/#', 'dh/foo/bar', 'dh/notification/x/#']), [128, 128, 128, 128, 128, 128])
  const gone = closed(client)
  await client.publishAsync('sensors/t1', 'x')
  await gone
  t.pass('a publish outside dh/ closes the connection (MQTT 3.1.1 cannot refuse one otherwise)')
})

t.test('MQTT over WebSocket: a CONNECT split over three frames in one turn is answered (Node.js 26)', async (t) => {
  const h = await startMqttHarness(t)
  const socket = new WebSocket(h.server.mqttWebSocketUrl!, 'mqtt')
  t.teardown(() => socket.terminate())
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject) })
  // CONNECT, MQTT 3.1.1, clean session, keep-alive 30 s, no credentials.
  const clientId = Buffer.from(`split-${process.pid}`)
  const body = Buffer.concat([Buffer.from([0, 4, ...Buffer.from('MQTT'), 4, 0x02, 0, 30, 0, clientId.length]), clientId])
  const connect = Buffer.concat([Buffer.from([0x10, body.length]), body])
  const answer = new Promise<Buffer[]>((resolve, reject) => {
    setTimeout(() => reject(new Error('no CONNACK in 5 s')), 5000).unref()
    const got: Buffer[] = []
    socket.on('message', (data: Buffer) => {
      got.push(data)
      if (Buffer.concat(got).length >= 4) resolve(got)
    })
  })
  socket.send(connect.subarray(0, 1))
  socket.send(connect.subarray(1, 2))
  socket.send(connect.subarray(2))
  t.same([...Buffer.concat(await answer)], [0x20, 0x02, 0x00, 0x00], 'CONNACK, accepted (anonymous)')
})

t.test('MQTT over WebSocket on the HTTP port', async (t) => {
  const h = await startMqttHarness(t)
  const url = h.server.mqttWebSocketUrl
  t.match(url, /^ws:\/\/127\.0\.0\.1:\d+\/mqtt$/)
  const client = await connectMqtt(t, url!, { username: ADMIN.login, password: ADMIN.password })
  t.equal((await request(client, { action: 'server/info' })).status, 'success')
  await t.rejects(connectMqtt(t, url!, { username: ADMIN.login, password: 'wrong-password' }), { code: 4 })
})
