/**
 * A WebSocket as the byte stream the MQTT server reads: each binary message is pushed as a chunk,
 * each write goes out as one binary frame (writes made together as one). Over `ws`'s own
 * createWebSocketStream, a client that splits a packet over several frames (mqtt.js does: one frame
 * per piece) got no answer on Node.js 26.
 */
import { Duplex } from 'node:stream'
import type { WebSocket } from 'ws'

/** Emitted by the stream just before the WebSocket is closed from this side. */
export const CLOSING = 'websocket-closing'

/**
 * @example
 * mqtt.handle(webSocketDuplex(socket), request.raw, request.ip)
 */
export function webSocketDuplex (socket: WebSocket): Duplex {
  const send = (data: Buffer, callback: (error?: Error | null) => void): void => {
    if (socket.readyState !== socket.OPEN) return callback(new Error('WebSocket is not open'))
    socket.send(data, { binary: true }, (error) => callback(error ?? null))
  }
  const duplex = new Duplex({
    read () {
      if (socket.isPaused) socket.resume()
    },
    write (chunk: Buffer, _encoding, callback) {
      send(chunk, callback)
    },
    writev (chunks, callback) {
      send(Buffer.concat(chunks.map((entry) => entry.chunk as Buffer)), callback)
    },
    final (callback) {
      socket.close()
      callback()
    },
    destroy (error, callback) {
      if (socket.readyState !== socket.CLOSED) socket.terminate()
      callback(error)
    }
  })
  // Frames that arrive together are pushed as one chunk: on Node.js 26 the MQTT parser loses a
  // packet whose pieces reach it as several chunks in one turn (a packet split over turns parses).
  let pending: Buffer[] = []
  const flush = (): void => {
    const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending)
    pending = []
    if (!duplex.destroyed && !duplex.push(chunk)) socket.pause()
  }
  socket.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
    if (pending.length === 0) setImmediate(flush)
    pending.push(Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data))
  })
  socket.on('close', () => {
    if (pending.length > 0) flush()
    duplex.push(null)
    duplex.destroy()
  })
  // A socket error (a client gone mid-frame) is the connection's end, never the process's.
  socket.on('error', () => duplex.destroy())
  // The WebSocket server closes its clients before the MQTT server's shutdown runs: 'closing'
  // lets a last packet (an MQTT 5 DISCONNECT 0x8B) go out ahead of the close frame.
  const close = socket.close.bind(socket)
  socket.close = (code?: number, reason?: string | Buffer) => {
    if (socket.readyState === socket.OPEN) duplex.emit(CLOSING)
    close(code, reason)
  }
  return duplex
}
