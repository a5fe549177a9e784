/**
 * A sleepy device that hops between two instances over one PostgreSQL database as fast as it
 * can (issue #25): it acknowledges a command on one instance, disconnects, and connects to the
 * other at once, before the first has written the acknowledgement. The second instance must not
 * deliver the acknowledged command again. The second test makes the first instance's write slow
 * on purpose (a row lock held by the test), which is the race at its worst.
 */
import pg from 'pg'
import { startServer } from '../../lib/start-server.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'
import { commandTopic, connectSleepy, rest, sendCommand, waitForCursor } from '../fixtures/mqtt-sleepy.js'

const HOPS = 8

postgresTest('an acknowledged command is not delivered again after a fast hop to the other instance', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const options = { db, port: 0, jwtSecret: 'durable-fast-hop-secret-0123456789abcdef', admin: { password: 'fast-hop-pass' }, mqtt: { port: 0 } }
  const a = await startServer(options)
  t.teardown(() => a.close())
  const b = await startServer(options)
  t.teardown(() => b.close())
  const { accessToken: token } = await a.adminTokens()
  t.equal((await rest(a.url, token, 'PUT', '/device/hopper', { name: 'hopper' })).status, 204)

  const first = await connectSleepy(a.mqttUrl!, token, 'hopper')
  await first.client.subscribeAsync(commandTopic('hopper'), { qos: 1 })
  const c0 = await sendCommand(a.url, token, 'hopper', 'c0')
  t.same((await first.waitFor(1)).map((x) => x.id), [c0])
  let device = first
  const repeats: number[] = []
  for (let hop = 1; hop <= HOPS; hop++) {
    const target = hop % 2 === 1 ? b : a
    // The PUBACK of the last command is out: disconnect and reconnect elsewhere at once.
    await device.close()
    device = await connectSleepy(target.mqttUrl!, token, 'hopper')
    const next = await sendCommand(target.url, token, 'hopper', `c${hop}`)
    const received = (await device.waitFor(1)).map((x) => x.id)
    // Whatever came before `next` is a repeat of an acknowledged command.
    if (received[0] !== next) {
      repeats.push(received[0]!)
      await device.waitFor(2)
    }
  }
  await device.close()
  t.same(repeats, [], `no acknowledged command delivered again over ${HOPS} fast hops`)
})

postgresTest('the other instance waits for the acknowledgement written late by the first one', async (t, adminUrl) => {
  const db = await createTestDatabase(t, adminUrl)
  const options = { db, port: 0, jwtSecret: 'durable-slow-ack-secret-0123456789abcdef', admin: { password: 'slow-ack-pass' }, mqtt: { port: 0 } }
  const a = await startServer(options)
  t.teardown(() => a.close())
  const b = await startServer(options)
  t.teardown(() => b.close())
  const { accessToken: token } = await a.adminTokens()
  t.equal((await rest(a.url, token, 'PUT', '/device/slow-ack', { name: 'slow-ack' })).status, 204)
  const key = { userId: 1, clientId: 'slow-ack' }

  const onA = await connectSleepy(a.mqttUrl!, token, 'slow-ack')
  await onA.client.subscribeAsync(commandTopic('slow-ack'), { qos: 1 })
  const c0 = await sendCommand(a.url, token, 'slow-ack', 'c0')
  await onA.waitFor(1)
  await waitForCursor(a.hub.store, key, commandTopic('slow-ack'), 'slow-ack', c0)

  // Instance A's next cursor write waits behind this lock: its acknowledgement lands late.
  const locker = new pg.Client({ connectionString: db })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('begin')
  await locker.query('select * from mqtt_subscriptions where client_id = $1 for update', ['slow-ack'])
  const c1 = await sendCommand(a.url, token, 'slow-ack', 'c1')
  t.same((await onA.waitFor(2)).map((x) => x.id), [c0, c1])
  await onA.close()
  const unlocked = new Promise((resolve) => setTimeout(resolve, 600)).then(() => locker.query('commit'))

  const onB = await connectSleepy(b.mqttUrl!, token, 'slow-ack')
  await unlocked
  const c2 = await sendCommand(b.url, token, 'slow-ack', 'c2')
  t.same((await onB.waitFor(1)).map((x) => x.id), [c2], 'c1, acknowledged on A, is not delivered again by B')
  await onB.close()
})
