/**
 * Sleepy devices across a server restart (issue #25 point 4), on a SQLite file: the session's
 * subscriptions and its acknowledged-command cursor are in the database, not in the broker's
 * memory, so a restarted server still delivers what was created while the device was away,
 * and still not what it acknowledged.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { RunningServer } from '../../lib/start-server.js'
import { startServer } from '../../lib/start-server.js'
import { commandTopic, connectSleepy, rest, sendCommand } from '../fixtures/mqtt-sleepy.js'

t.test('a restart in between: commands of the time away arrive, acknowledged ones not again', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-durable-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const options = { db: join(dir, 'hub.db'), port: 0, jwtSecret: 'durable-restart-secret-0123456789abcdef', admin: { password: 'durable-restart-pass' }, mqtt: { port: 0 } }
  let server: RunningServer = await startServer(options)
  t.teardown(() => server.close())
  const restart = async (): Promise<void> => {
    await server.close()
    server = await startServer(options)
  }
  const { accessToken: token } = await server.adminTokens()
  t.equal((await rest(server.url, token, 'PUT', '/device/sleepy-r', { name: 'sleepy-r' })).status, 204)

  const first = await connectSleepy(server.mqttUrl!, token, 'sleepy-r')
  await first.client.subscribeAsync(commandTopic('sleepy-r'), { qos: 1 })
  await first.close()
  const a = await sendCommand(server.url, token, 'sleepy-r', 'a')
  const b = await sendCommand(server.url, token, 'sleepy-r', 'b')
  await restart()

  // The restarted server knows the session from the database alone.
  const second = await connectSleepy(server.mqttUrl!, token, 'sleepy-r', (command) => command.id !== b)
  t.same((await second.waitFor(2)).map((x) => x.id), [a, b], 'created before the restart, delivered after it, in order')
  await second.close()
  await restart()

  const third = await connectSleepy(server.mqttUrl!, token, 'sleepy-r')
  t.same((await third.waitFor(1)).map((x) => x.id), [b], 'only the unacknowledged one, after a second restart')
  const c = await sendCommand(server.url, token, 'sleepy-r', 'c')
  t.same((await third.waitFor(2)).map((x) => x.id), [b, c], 'then live ones')
  await third.close()
})
