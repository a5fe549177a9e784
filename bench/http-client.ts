/**
 * The bench's HTTP/1.1 client: keep-alive sockets per origin, one request in flight on each, the
 * request written in one piece, the answer read by its `content-length`. It does for a round
 * trip what `http.request` does at a third to a half of its CPU (stop 64, (b) saturated: against
 * devicehub 0.24-0.28 of a core where Node's client took 0.64-0.67; against bare 0.62-0.79 at up to
 * 6,468 rt/s where Node's took 0.96-1.01 at up to 4,077), so the load generator no longer sets the
 * pace of the bare baseline, nor takes the second core that a second instance needs in (d). Both
 * servers answer every request with a `content-length` (JSON, or none for a 204); a chunked answer
 * is an error here, not something to guess at.
 */
import net from 'node:net'

export interface Answer {
  status: number
  body: any // eslint-disable-line @typescript-eslint/no-explicit-any
}

interface Waiter {
  resolve(answer: Answer): void
  reject(error: Error): void
}

/** No answer of either server comes near this: a larger one means the parse went wrong. */
const MAX_ANSWER = 1 << 20

const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i
const CHUNKED = /\r\ntransfer-encoding:/i
const CLOSE = /\r\nconnection: *close/i

/** One keep-alive socket: at most one request in flight, back in its pool when answered. */
class Connection {
  private readonly socket: net.Socket
  private received: Buffer | undefined
  private waiter: Waiter | undefined

  constructor (port: number, host: string, private readonly pool: Connection[]) {
    this.socket = net.connect(port, host)
    this.socket.setNoDelay(true)
    this.socket.on('data', (chunk: Buffer) => this.read(chunk))
    this.socket.on('error', (error) => this.fail(error))
    this.socket.on('close', () => this.fail(new Error('the server closed the connection')))
  }

  send (text: string, waiter: Waiter): void {
    this.waiter = waiter
    this.socket.write(text)
  }

  close (): void {
    this.socket.destroy()
  }

  private read (chunk: Buffer): void {
    const received = this.received === undefined ? chunk : Buffer.concat([this.received, chunk])
    this.received = received
    const headEnd = received.indexOf('\r\n\r\n')
    if (headEnd < 0) return this.checkSize(received.length)
    const head = received.toString('latin1', 0, headEnd)
    if (CHUNKED.test(head)) return this.fail(new Error(`a chunked answer: ${head.slice(0, 200)}`))
    const length = Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0)
    const end = headEnd + 4 + length
    if (received.length < end) return this.checkSize(end)
    const text = received.toString('utf8', headEnd + 4, end)
    this.received = received.length > end ? received.subarray(end) : undefined
    const waiter = this.waiter
    this.waiter = undefined
    if (CLOSE.test(head)) this.socket.destroy()
    else this.pool.push(this)
    try {
      waiter?.resolve({ status: Number(head.slice(9, 12)), body: text === '' ? undefined : JSON.parse(text) })
    } catch (error) {
      waiter?.reject(error as Error)
    }
  }

  private checkSize (size: number): void {
    if (size > MAX_ANSWER) this.fail(new Error(`an answer of ${size} bytes`))
  }

  private fail (error: Error): void {
    const index = this.pool.indexOf(this)
    if (index >= 0) this.pool.splice(index, 1)
    this.socket.destroy()
    const waiter = this.waiter
    this.waiter = undefined
    waiter?.reject(error)
  }
}

export interface HttpClient {
  /**
   * One JSON request; resolves with the status and the parsed body (undefined when empty).
   *
   * @example
   * const { status, body } = await client.request('POST', `${url}/device/d1/command`, token, { command: 'ping' })
   */
  request(method: string, url: string, token: string, body?: unknown): Promise<Answer>
  /** Closes the idle sockets (a request in flight keeps its own until answered). */
  close(): void
}

/** A client with its own pools (one per origin, the most recently answered socket reused first). */
export function createHttpClient (): HttpClient {
  const pools = new Map<string, Connection[]>()
  return {
    request (method, url, token, body) {
      const { host, hostname, port, pathname, search } = new URL(url)
      let pool = pools.get(host)
      if (pool === undefined) pools.set(host, pool = [])
      const connection = pool.pop() ?? new Connection(Number(port), hostname, pool)
      const payload = body === undefined ? '' : JSON.stringify(body)
      let text = `${method} ${pathname}${search} HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${token}\r\n`
      if (body !== undefined) text += `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n`
      text += `\r\n${payload}`
      return new Promise((resolve, reject) => connection.send(text, { resolve, reject }))
    },
    close () {
      for (const pool of pools.values()) for (const connection of pool.splice(0)) connection.close()
    }
  }
}
