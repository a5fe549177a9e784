/**
 * Which MQTT a connection speaks, read from the first bytes of its CONNECT (the protocol level:
 * 4 = 3.1.1, 5 = MQTT 5) before any MQTT code sees the stream. The bytes read are put back, so
 * whoever serves the connection next reads it from its first byte.
 */
import type { Duplex } from 'node:stream'

/** CONNECT's fixed header byte (type 1, flags 0). */
const CONNECT = 0x10

/**
 * The protocol level of a CONNECT starting `bytes`: a number, 'more' when the bytes end before it,
 * undefined when they are no CONNECT (the broker then answers them as garbage).
 *
 * @example
 * protocolLevel(Buffer.from([0x10, 0x10, 0, 4, 0x4d, 0x51, 0x54, 0x54, 5])) // 5
 */
export function protocolLevel (bytes: Buffer): number | 'more' | undefined {
  if (bytes.length === 0) return 'more'
  if (bytes[0] !== CONNECT) return undefined
  // The remaining length: a variable byte integer of 1 to 4 bytes.
  let position = 1
  for (;;) {
    if (position >= bytes.length) return 'more'
    if (position > 4) return undefined
    if ((bytes[position++]! & 0x80) === 0) break
  }
  if (position + 2 > bytes.length) return 'more'
  const nameLength = bytes.readUInt16BE(position)
  // 'MQTT' (3.1.1, 5) or 'MQIsdp' (3.1).
  if (nameLength !== 4 && nameLength !== 6) return undefined
  const levelAt = position + 2 + nameLength
  if (levelAt >= bytes.length) return 'more'
  // Bit 7: a bridge's CONNECT (mqtt-packet's bridge mode).
  return bytes[levelAt]! & 0x7f
}

/**
 * Reads `stream` until the protocol level of its CONNECT is known, puts the bytes back and calls
 * `done` (on a later tick, once the stream has no reader of its own left). A connection that
 * says nothing for `timeoutMs` is closed, as one that sends no CONNECT.
 *
 * @example
 * readProtocolLevel(socket, 10_000, (level) => level === 5 ? serveMqtt5(socket) : broker.handle(socket))
 */
export function readProtocolLevel (stream: Duplex, timeoutMs: number, done: (level: number | undefined) => void): void {
  const read: Buffer[] = []
  const timer = setTimeout(() => stream.destroy(), timeoutMs)
  timer.unref()
  const onError = (): void => {
    stream.destroy()
  }
  const onClose = (): void => {
    clearTimeout(timer)
  }
  const onReadable = (): void => {
    let chunk: Buffer | null
    while ((chunk = stream.read() as Buffer | null) !== null) read.push(chunk)
    const bytes = read.length === 1 ? read[0]! : Buffer.concat(read)
    const level = protocolLevel(bytes)
    if (level === 'more') return
    clearTimeout(timer)
    stream.off('readable', onReadable)
    stream.off('close', onClose)
    if (bytes.length > 0) stream.unshift(bytes)
    // The next reader's 'readable' fires only once the stream has noticed this one is gone (a tick).
    process.nextTick(() => {
      stream.off('error', onError)
      if (!stream.destroyed) done(level)
    })
  }
  stream.on('error', onError)
  stream.on('close', onClose)
  stream.on('readable', onReadable)
}
