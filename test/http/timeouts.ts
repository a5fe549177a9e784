/**
 * Issue #16: a request body or headers sent one byte at a time are cut off (real sockets), and
 * secret query parameters never reach the logs, however they are percent-encoded.
 */
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import t from 'tap'
import { buildServer, redactUrl } from '../../lib/http/build-server.js'
import { createTestApp } from '../fixtures/app.js'
import { sleep } from '../fixtures/messaging.js'

/** Sends `head`, then one byte of `drip` every 100 ms; resolves with what the server answered and how long it took. */
function slowRequest (port: number, head: string, drip: string): Promise<{ answer: string, ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    let i = 0
    const timer = setInterval(() => {
      if (i < drip.length && !socket.destroyed) socket.write(drip[i++]!)
    }, 100)
    socket.on('connect', () => socket.write(head))
    socket.on('data', (chunk) => { answer += chunk.toString() })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearInterval(timer)
      resolve({ answer, ms: Date.now() - started })
    })
    setTimeout(() => {
      clearInterval(timer)
      socket.destroy()
      reject(new Error('the server never cut the request off'))
    }, 15_000).unref()
  })
}

t.test('a body sent one byte at a time is timed out', async (t) => {
  const h = await createTestApp(t)
  const app = await buildServer({ hub: h.hub, closeHub: false, requestTimeoutMs: 1000, headersTimeoutMs: 500 })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const body = JSON.stringify({ login: 'dhadmin', password: 'x'.repeat(200) })
  const head = `POST /api/rest/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`
  const slow = await slowRequest(port, head, body)
  t.match(slow.answer, /^HTTP\/1\.1 408/, 'answered 408 Request Timeout')
  t.ok(slow.ms < 5000, `cut off after ${slow.ms} ms`)

  const headers = await slowRequest(port, 'GET /api/rest/info HTTP/1.1\r\n', 'Host: x\r\nX-Slow: ' + 'a'.repeat(100))
  t.match(headers.answer, /^HTTP\/1\.1 408/, 'slow headers too')
  t.ok(headers.ms < 5000, `cut off after ${headers.ms} ms`)

  const normal = await fetch(`http://127.0.0.1:${port}/api/rest/info`)
  t.equal(normal.status, 200, 'normal requests are unaffected')
})

t.test('close() lets a request in flight finish, then closes a connection whose client stopped reading', async (t) => {
  const h = await createTestApp(t)
  const app = await buildServer({ hub: h.hub, closeHub: false, closeGraceMs: 500 })
  let started = (): void => undefined
  const bigStarted = new Promise<void>((resolve) => { started = resolve })
  // More than the kernel's socket buffers hold: its answer cannot finish while the client does not read.
  app.get('/big', async () => {
    started()
    return Buffer.alloc(64 * 1024 * 1024)
  })
  let slowArrived = (): void => undefined
  const slowStarted = new Promise<void>((resolve) => { slowArrived = resolve })
  app.get('/slow', async () => {
    slowArrived()
    await sleep(200)
    return { slow: true }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port

  const stuck = connect(port, '127.0.0.1')
  const stuckClosed = new Promise<void>((resolve) => stuck.on('close', () => resolve()))
  stuck.on('error', () => undefined)
  stuck.pause()
  stuck.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n')
  await bigStarted
  const slow = fetch(`http://127.0.0.1:${port}/slow`)
  // The slow request has reached its handler before close() starts (a fixed sleep was not always
  // enough on a slow machine: the connection, not yet accepted, was reset by the close).
  await slowStarted

  const closing = app.close().then(() => 'closed')
  const outcome = await Promise.race([closing, new Promise((resolve) => setTimeout(() => resolve('still open after 10 s'), 10_000).unref())])
  t.equal(outcome, 'closed', 'close() ends although a client stopped reading')
  const answer = await slow
  t.equal(answer.status, 200, 'the request in flight got its answer')
  t.same(await answer.json(), { slow: true })
  stuck.resume()
  await stuckClosed
  t.pass('the stuck connection was closed')
})

t.test('secret query parameters are redacted from logs whatever their encoding', async (t) => {
  t.equal(redactUrl('/api/rest/x?token=abc&y=1'), '/api/rest/x?token=[redacted]&y=1')
  t.equal(redactUrl('/api/rest/x?%74oken=abc'), '/api/rest/x?%74oken=[redacted]')
  t.equal(redactUrl('/api/rest/x?%54%4F%4B%45%4E=abc&a=b'), '/api/rest/x?%54%4F%4B%45%4E=[redacted]&a=b')
  t.equal(redactUrl('/api/rest/x?a=1&refresh_token=z&%zz=1'), '/api/rest/x?a=1&refresh_token=[redacted]&%zz=1')
  t.equal(redactUrl('/api/rest/x'), '/api/rest/x')

  const h = await createTestApp(t)
  let logged = ''
  const stream = new Writable({ write (chunk, _encoding, done) { logged += chunk.toString(); done() } })
  const app = await buildServer({ hub: h.hub, closeHub: false, logger: { level: 'info', stream } })
  t.teardown(() => app.close())
  await app.inject({ method: 'GET', url: '/api/rest/plugin?%74oken=SECRET-TOKEN-VALUE' })
  t.ok(logged.includes('[redacted]'), 'the request was logged')
  t.notOk(logged.includes('SECRET-TOKEN-VALUE'), 'without the token')
})
