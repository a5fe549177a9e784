/**
 * client-pause.ts reaches into aedes' client internals (issue #25): a client without them (a
 * future aedes) is not paused, and the server's logger says so once, not once per connection.
 * The client without internals is a bare object: it stands for an aedes that changed.
 */
import { PassThrough } from 'node:stream'
import { Aedes } from 'aedes'
import type { Client } from 'aedes'
import Fastify from 'fastify'
import t from 'tap'
import { createPauseCheck, pausableClient } from '../../lib/mqtt/client-pause.js'

function capturedLogger (): { logger: { warn(message: string): void }, lines: () => Array<{ level: number, msg: string }> } {
  const output = new PassThrough()
  const chunks: string[] = []
  output.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
  const app = Fastify({ logger: { level: 'warn', stream: output } })
  return { logger: app.log, lines: () => chunks.join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line)) }
}

t.test('a client without aedes\' internals: one warning per logger, pausing does nothing', async (t) => {
  const { logger, lines } = capturedLogger()
  const bare = {} as Client
  const checkPausable = createPauseCheck(logger)
  t.equal(checkPausable(bare), false)
  t.equal(checkPausable({} as Client), false)
  await new Promise((resolve) => setImmediate(resolve))
  t.match(lines(), [{ level: 40, msg: /not paused/ }], 'warned once')
  const gate = pausableClient(bare)
  gate.pause()
  gate.resume()
  t.same(bare, {}, 'nothing written into the client')
})

t.test('an aedes client paused by its CONNECT has them: no warning', async (t) => {
  const { logger, lines } = capturedLogger()
  const broker = await Aedes.createBroker()
  t.teardown(() => new Promise<void>((resolve) => broker.close(() => resolve())))
  const stream = new PassThrough()
  const client = broker.handle(stream)
  t.teardown(() => stream.destroy())
  // As during CONNECT, when the server checks it.
  ;(client as unknown as { pause(): void }).pause()
  t.equal(createPauseCheck(logger)(client), true)
  await new Promise((resolve) => setImmediate(resolve))
  t.same(lines(), [])
})
