/** The bench's lean HTTP client (bench/http-client.ts) against a real Fastify app and a raw socket server. */
import { once } from 'node:events'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import type { Test } from 'tap'
import t from 'tap'
import { createHttpClient } from '../../bench/http-client.js'

t.test('requests, answers and reuses its sockets against Fastify', async (t) => {
  const app = Fastify()
  let connections = 0
  app.server.on('connection', () => { connections++ })
  app.post('/echo', async (request) => ({ got: request.body, auth: request.headers.authorization, query: request.query }))
  app.delete('/empty', async (_request, reply) => reply.code(204).send())
  app.get('/closing', async (_request, reply) => reply.header('connection', 'close').send({ bye: true }))
  app.get('/missing', async (_request, reply) => reply.code(404).send({ error: 'no' }))
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const client = createHttpClient()
  t.teardown(() => client.close())

  const echoed = await client.request('POST', `${url}/echo?x=1`, 'tok', { command: 'ping', text: 'é'.repeat(5000) })
  t.same(echoed, { status: 200, body: { got: { command: 'ping', text: 'é'.repeat(5000) }, auth: 'Bearer tok', query: { x: '1' } } })
  t.same(await client.request('DELETE', `${url}/empty`, 'tok'), { status: 204, body: undefined })
  t.same(await client.request('GET', `${url}/missing`, 'tok'), { status: 404, body: { error: 'no' } })
  t.equal(connections, 1, 'one request at a time reuses one socket')

  const parallel = await Promise.all([1, 2, 3].map((n) => client.request('POST', `${url}/echo`, 'tok', { n })))
  t.same(parallel.map((answer) => answer.body.got.n), [1, 2, 3])
  t.equal(connections, 3, 'concurrent requests each take a socket; the idle ones are reused')

  t.same(await client.request('GET', `${url}/closing`, 'tok'), { status: 200, body: { bye: true } })
  t.same((await client.request('POST', `${url}/echo`, 'tok', { after: 1 })).body.got, { after: 1 })
})

/** Listens on a free port of 127.0.0.1 until the test ends; its URL. */
async function listening (t: Test, server: net.Server): Promise<string> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A server that answers every request with the pieces `answer` gives, 20 ms apart. */
function rawServer (t: Test, answer: string[]): Promise<string> {
  return listening(t, net.createServer((socket) => {
    t.teardown(() => { socket.destroy() })
    socket.once('data', () => {
      answer.forEach((piece, i) => setTimeout(() => socket.write(piece), 20 * i))
    })
  }))
}

t.test('reads an answer split across packets, and refuses what it cannot read', async (t) => {
  const client = createHttpClient()
  t.teardown(() => client.close())
  const split = await rawServer(t, ['HTTP/1.1 200 OK\r\nContent-Le', 'ngth: 11\r\n\r\n{"a"', ':[1,2]}'])
  t.same(await client.request('GET', `${split}/x`, 'tok'), { status: 200, body: { a: [1, 2] } })

  const chunked = await rawServer(t, ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'])
  await t.rejects(client.request('GET', `${chunked}/x`, 'tok'), /a chunked answer/)

  const broken = await rawServer(t, ['HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{nope'])
  await t.rejects(client.request('GET', `${broken}/x`, 'tok'), SyntaxError)

  const huge = await rawServer(t, [`HTTP/1.1 200 OK\r\nContent-Length: ${2 << 20}\r\n\r\n`])
  await t.rejects(client.request('GET', `${huge}/x`, 'tok'), /an answer of/)

  const hangUp = await listening(t, net.createServer((socket) => socket.once('data', () => socket.destroy())))
  await t.rejects(client.request('GET', `${hangUp}/`, 'tok'), /closed the connection/)
})
