/**
 * CONNACK's session present flag (MQTT 3.1.1 §3.2.2.2, MQTT 5 §3.2.2.1.1) for sessions the store
 * resumes. aedes 1.2 sets the flag from its own session state, and it is told every session is
 * clean (durable-sessions.ts), so it always writes 0. Its CONNACK is written with mqtt-packet's
 * writeToStream, one `write` per field, into the stream aedes serves: the 3.1.1 client's socket,
 * or the MQTT 5 front end's `inner` (whose CONNACK is built from the one aedes wrote, flag
 * included). The first four bytes written there are held, and when they are a successful
 * CONNACK the flag is set before they go out as one write.
 */
import type { Writable } from 'node:stream'

/** A successful 3.1.1 CONNACK: type 2, remaining length 2, flags, return code 0. */
const CONNACK_TYPE = 0x20
const CONNACK_LENGTH = 2
const ACCEPTED = 0
const CONNACK_BYTES = 4
const SESSION_PRESENT = 0x01

type Write = (chunk: unknown, ...rest: unknown[]) => boolean
type Stream = Pick<Writable, 'write'>

/**
 * Has the CONNACK written next into `stream` say that a session is present. `onUnexpected` is
 * called (and the bytes go out as they were) when the first bytes written are not a successful
 * CONNACK: not the aedes this was written for.
 *
 * @example
 * if (await durable.open(session, client)) announceSessionPresent(client.conn, () => logger.warn('...'))
 */
export function announceSessionPresent (stream: Stream, onUnexpected: () => void): void {
  const own = Object.prototype.hasOwnProperty.call(stream, 'write')
  const original = stream.write as Write
  const held: Buffer[] = []
  let length = 0
  const restore = (): void => {
    if (own) stream.write = original as Stream['write']
    else delete (stream as { write?: unknown }).write
  }
  const heldWrite: Write = (chunk, ...rest) => {
    if (!Buffer.isBuffer(chunk)) {
      // Not mqtt-packet's writing: what was held goes first, unchanged.
      restore()
      onUnexpected()
      if (held.length > 0) original.call(stream, Buffer.concat(held))
      return original.call(stream, chunk, ...rest)
    }
    held.push(chunk)
    length += chunk.length
    // mqtt-packet writes the CONNACK's fields in one turn, without callbacks: nothing waits on these.
    if (length < CONNACK_BYTES) return true
    restore()
    // A copy: mqtt-packet's field buffers are shared constants.
    const bytes = Buffer.concat(held)
    if (bytes[0] === CONNACK_TYPE && bytes[1] === CONNACK_LENGTH && bytes[3] === ACCEPTED) bytes[2] = SESSION_PRESENT
    else onUnexpected()
    return original.call(stream, bytes, ...rest)
  }
  stream.write = heldWrite as Stream['write']
}
