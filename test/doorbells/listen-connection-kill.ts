/**
 * Losing the doorbell's LISTEN connection loses doorbells, never items: polls parked while it is
 * down for another instance's writes are answered after the reconnect (the resync wake-up), and
 * cursors see every item once. (An instance's own writes do not need its LISTEN connection: their
 * events come from their statements, see out-of-order-commits.ts.) A `revoke` lost that way is
 * made up for by the resync: each wait's rights are checked again before it reads; so is a lost
 * `plugin` event: each plugin on the instance is read again.
 */
import type { Test } from 'tap'
import { WebSocket } from 'ws'
import type { PostgresDoorbell } from '../../lib/doorbells/postgres-doorbell.js'
import { DEFAULT_DOORBELL_APPLICATION_NAME } from '../../lib/doorbells/postgres-doorbell.js'
import type { RunningServer } from '../../lib/start-server.js'
import { startServer } from '../../lib/start-server.js'
import { call, eventually, sleep } from '../fixtures/messaging.js'
import { adminQuery, createTestDatabase, postgresTest } from '../fixtures/pg-database.js'
import { ProxyClient } from '../fixtures/plugin-proxy.js'

postgresTest('a killed LISTEN connection: parked polls still get every item, cursors see each once', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const dbName = new URL(db).pathname.slice(1)
  // The first reconnect waits 3 s, so the writes below happen while the connection is down even
  // on a slow machine (with the default 250 ms they sometimes did not).
  const server = await startServer({
    db, jwtSecret: 'kill-test-secret', admin: { password: 'kill-test-password' }, doorbell: { reconnect: { initialDelayMs: 3000 } }
  })
  t.teardown(() => server.close())
  const doorbell = server.doorbell!
  const { accessToken: token } = await server.adminTokens()
  const base = server.url
  // The instance whose writes the parked polls wait for: its NOTIFYs are what the lost connection loses.
  const other = await startServer({ db, jwtSecret: 'kill-test-secret', doorbell: { applicationName: 'devicehub-doorbell-writer' } })
  t.teardown(() => other.close())
  const writer = other.url
  const before = (await call(`${base}/info`, token)).body.serverTimestamp as string

  const networkId = (await call(`${base}/network`, token, { method: 'POST', body: { name: 'kill', description: null } })).body.id as number
  const devices = ['kill-0', 'kill-1', 'kill-2', 'kill-3']
  for (const id of devices) t.equal((await call(`${base}/device/${id}`, token, { method: 'PUT', body: { name: id, networkId } })).status, 204)
  const awaited = (await call(`${base}/device/kill-0/command`, token, { method: 'POST', body: { command: 'awaited' } })).body.id as number

  // Park: a command poll and a notification poll per device, and one wait for an update.
  const commandPolls = devices.map((id) => call(`${base}/device/${id}/command/poll?waitTimeout=30`, token))
  const notificationPolls = devices.map((id) => call(`${base}/device/${id}/notification/poll?waitTimeout=30`, token))
  const updateWait = call(`${base}/device/kill-0/command/${awaited}/poll?waitTimeout=30`, token)
  let settled = 0
  for (const poll of [...commandPolls, ...notificationPolls, updateWait]) void poll.finally(() => { settled++ })
  await sleep(400)
  t.equal(settled, 0, 'every poll is parked')

  const listeners = await adminQuery(adminUrl, 'select pid from pg_stat_activity where datname = $1 and application_name = $2', [dbName, DEFAULT_DOORBELL_APPLICATION_NAME])
  t.same(listeners.rows.map((r: { pid: number }) => r.pid), [doorbell.listenerPid], 'one LISTEN connection, found by its application_name')
  const killed = doorbell.listenerPid
  t.equal((await adminQuery(adminUrl, 'select pg_terminate_backend($1) as ok', [killed])).rows[0].ok, true)
  await eventually(() => !doorbell.connected, 5000)
  t.equal((await server.hub.health()).checks.doorbell.status, 'fail', 'readiness fails while the connection is down')

  // Writes while the LISTEN connection is down: their doorbells are lost.
  const commands = await Promise.all(devices.map((id) => call(`${writer}/device/${id}/command`, token, { method: 'POST', body: { command: `while-down-${id}` } })))
  const notifications = await Promise.all(devices.map((id) => call(`${writer}/device/${id}/notification`, token, { method: 'POST', body: { notification: `while-down-${id}`, parameters: { id } } })))
  t.equal((await call(`${writer}/device/kill-0/command/${awaited}`, token, { method: 'PUT', body: { status: 'Done', result: { r: 1 } } })).status, 204)
  t.equal(doorbell.connected, false, 'every write happened while the LISTEN connection was down')
  t.ok([...commands, ...notifications].every((r) => r.status === 201))

  const commandAnswers = await Promise.all(commandPolls)
  const notificationAnswers = await Promise.all(notificationPolls)
  const updated = await updateWait
  devices.forEach((id, i) => {
    t.equal(commandAnswers[i]!.status, 200)
    t.same(commandAnswers[i]!.body.map((c: { id: number, command: string }) => [c.id, c.command]), [[commands[i]!.body.id, `while-down-${id}`]], `${id}: its command`)
    t.same(notificationAnswers[i]!.body.map((n: { id: number, notification: string, parameters: unknown }) => [n.id, n.notification, n.parameters]),
      [[notifications[i]!.body.id, `while-down-${id}`, { id }]], `${id}: its notification`)
  })
  t.equal(updated.status, 200)
  t.same([updated.body.id, updated.body.status, updated.body.result], [awaited, 'Done', { r: 1 }], 'the update wait got the update')
  t.ok(doorbell.connected, 'reconnected')
  t.equal((await server.hub.health()).status, 'ok', 'ready again')
  t.not(doorbell.listenerPid, killed, 'on a new connection')
  const after = await adminQuery(adminUrl, 'select pid from pg_stat_activity where datname = $1 and application_name = $2', [dbName, DEFAULT_DOORBELL_APPLICATION_NAME])
  t.same(after.rows.map((r: { pid: number }) => r.pid), [doorbell.listenerPid], 'still exactly one LISTEN connection')

  // Doorbells flow again on the new connection: a poll parked now is woken by the next write.
  const again = call(`${base}/device/kill-1/notification/poll?waitTimeout=30`, token)
  await sleep(300)
  const started = Date.now()
  const later = await call(`${writer}/device/kill-1/notification`, token, { method: 'POST', body: { notification: 'after-reconnect' } })
  const woken = await again
  t.ok(Date.now() - started < 3000, 'woken by the doorbell, not by the timeout')
  t.same(woken.body.map((n: { id: number }) => n.id), [later.body.id])

  // Re-polls by cursor: every item exactly once, in order, and nothing after the last.
  for (const [i, id] of devices.entries()) {
    const expected = [notifications[i]!.body.id, ...(id === 'kill-1' ? [later.body.id] : [])]
    const all = await call(`${base}/device/${id}/notification/poll?timestamp=${encodeURIComponent(before)}&waitTimeout=0`, token)
    t.same(all.body.map((n: { id: number }) => n.id), expected, `${id}: notifications by cursor, each once`)
    const last = all.body[all.body.length - 1].timestamp as string
    t.same((await call(`${base}/device/${id}/notification/poll?timestamp=${encodeURIComponent(last)}&waitTimeout=0`, token)).body, [], `${id}: nothing after the last notification`)
    const expectedCommands = [...(id === 'kill-0' ? [awaited] : []), commands[i]!.body.id]
    const cmds = await call(`${base}/device/${id}/command/poll?timestamp=${encodeURIComponent(before)}&waitTimeout=0`, token)
    t.same(cmds.body.map((c: { id: number }) => c.id), expectedCommands, `${id}: commands by cursor, each once`)
    const lastCommand = cmds.body[cmds.body.length - 1].timestamp as string
    t.same((await call(`${base}/device/${id}/command/poll?timestamp=${encodeURIComponent(lastCommand)}&waitTimeout=0`, token)).body, [], `${id}: nothing after the last command`)
  }
})

/**
 * Two instances over a fresh database: `server`, whose LISTEN connection a test kills (its first
 * reconnect waits 3 s), and `other`, which writes meanwhile.
 */
async function twoInstances (t: Test, adminUrl: string): Promise<{ server: RunningServer, other: RunningServer, doorbell: PostgresDoorbell, admin: string }> {
  const db = await createTestDatabase(t, adminUrl)
  const server = await startServer({
    db, jwtSecret: 'kill-test-secret', admin: { password: 'kill-test-password' }, doorbell: { reconnect: { initialDelayMs: 3000 } }
  })
  t.teardown(() => server.close())
  const other = await startServer({ db, jwtSecret: 'kill-test-secret', doorbell: { applicationName: 'devicehub-doorbell-writer' } })
  t.teardown(() => other.close())
  return { server, other, doorbell: server.doorbell!, admin: (await server.adminTokens()).accessToken }
}

postgresTest('a revoke lost with the LISTEN connection: the resync ends the waits whose rights went', async (t, adminUrl) => {
  const { server, other, doorbell, admin } = await twoInstances(t, adminUrl)
  const base = server.url
  const networkId = (await call(`${base}/network`, admin, { method: 'POST', body: { name: 'revoked', description: null } })).body.id as number
  t.equal((await call(`${base}/device/rk-0`, admin, { method: 'PUT', body: { name: 'rk-0', networkId } })).status, 204)
  const userId = (await call(`${base}/user`, admin, { method: 'POST', body: { login: 'rk-user', password: 'rk-password-1', role: 1, status: 0 } })).body.id as number
  t.equal((await call(`${base}/user/${userId}/network/${networkId}`, admin, { method: 'PUT' })).status, 204)
  const login = await fetch(`${base}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'rk-user', password: 'rk-password-1' }) })
  const { accessToken: user } = await login.json() as { accessToken: string }

  const parked = server.hub.stats.parkedPolls
  const userPoll = call(`${base}/device/rk-0/notification/poll?waitTimeout=30`, user)
  const adminPoll = call(`${base}/device/rk-0/notification/poll?waitTimeout=30`, admin)
  await eventually(() => server.hub.stats.parkedPolls === parked + 2)
  t.equal((await adminQuery(adminUrl, 'select pg_terminate_backend($1) as ok', [doorbell.listenerPid])).rows[0].ok, true)
  await eventually(() => !doorbell.connected, 5000)

  // On the other instance while the connection is down: the network taken away (its revoke is
  // lost with the connection), then a notification of that network.
  t.equal((await call(`${other.url}/user/${userId}/network/${networkId}`, admin, { method: 'DELETE' })).status, 204)
  const secret = await call(`${other.url}/device/rk-0/notification`, admin, { method: 'POST', body: { notification: 'after-unassign' } })
  t.equal(secret.status, 201)
  t.equal(doorbell.connected, false, 'both writes happened while the LISTEN connection was down')

  const [userAnswer, adminAnswer] = await Promise.all([userPoll, adminPoll])
  t.same(userAnswer.body, [], 'the user who lost the network gets nothing of it: its poll answers [] at the resync')
  t.same(adminAnswer.body.map((n: { id: number }) => n.id), [secret.body.id], 'the administrator\'s poll gets the notification')
})

postgresTest('a plugin change lost with the LISTEN connection: the resync reads the plugin again', async (t, adminUrl) => {
  const { server, other, doorbell, admin } = await twoInstances(t, adminUrl)
  for (const id of ['pk-0', 'pk-1']) t.equal((await call(`${server.url}/device/${id}`, admin, { method: 'PUT', body: { name: id } })).status, 204)
  const plugin = (await call(`${server.url}/plugin?deviceId=pk-0&returnNotifications=true`, admin, { method: 'POST', body: { name: 'moved' } })).body
  const client = new ProxyClient(new WebSocket(`${server.url.replace(/^http/, 'ws').replace(/\/rest$/, '')}/plugin/proxy`))
  t.teardown(() => client.ws.terminate())
  await new Promise((resolve, reject) => client.ws.once('open', resolve).once('error', reject))
  t.equal((await client.authenticate(plugin.accessToken)).s, 0)
  t.equal((await client.subscribe(plugin.topicName)).s, 0)

  t.equal((await adminQuery(adminUrl, 'select pg_terminate_backend($1) as ok', [doorbell.listenerPid])).rows[0].ok, true)
  await eventually(() => !doorbell.connected, 5000)
  // On the other instance while the connection is down: the plugin's filter moves to pk-1 (a
  // filter changes while the plugin is INACTIVE); its `plugin` events are lost with the connection.
  for (const change of ['status=INACTIVE', 'deviceId=pk-1&returnNotifications=true', 'status=ACTIVE']) {
    const changed = await call(`${other.url}/plugin?topicName=${plugin.topicName}&${change}`, admin, { method: 'PUT' })
    t.equal(changed.status, 204, `${change}: ${JSON.stringify(changed.body)}`)
  }
  // Written after the activation, released before this instance hears of it: its consumer starts
  // at the activation's stored cursor, not at the moment the resync shows it the new activation.
  const meanwhile = await call(`${other.url}/device/pk-1/notification`, admin, { method: 'POST', body: { notification: 'meanwhile' } })
  t.equal(meanwhile.status, 201)
  t.equal(doorbell.connected, false, 'the change happened while the LISTEN connection was down')
  await eventually(() => doorbell.connected, 10_000)

  // After the reconnect: a notification of pk-1 reaches the plugin by its doorbell.
  const later = await call(`${other.url}/device/pk-1/notification`, admin, { method: 'POST', body: { notification: 'after-move' } })
  t.equal(later.status, 201)
  const deliveries = await client.waitDeliveries(2, 5000)
  t.same(deliveries.map((d) => d.event.b.notification.id), [meanwhile.body.id, later.body.id], 'delivered under the new filter')
})
