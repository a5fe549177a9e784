/**
 * The packet size bound aedes 1.2 lacks: its parser (mqtt-packet) buffers a whole packet before
 * it looks at it, whatever length the fixed header announces. The length is checked as soon as
 * it is read, so an oversized packet closes the connection after five bytes, not after a
 * gigabyte of buffering.
 */
import type { Client } from 'aedes'

export interface PacketParser {
  _parseLength?: () => boolean
  _emitError(error: Error): void
  packet: { length: number }
}

/** The error an oversized packet gives (the MQTT 5 front end answers it with DISCONNECT 0x95). */
export class PacketTooLargeError extends Error {}

/**
 * Bounds the packets an mqtt-packet parser reads to `maxBytes` (remaining length). False when the
 * parser is not the one this was written for.
 *
 * @example
 * limitParser(mqttPacket.parser(), 1024 * 1024)
 */
export function limitParser (parser: PacketParser | undefined, maxBytes: number): boolean {
  const parseLength = parser?._parseLength
  if (parser === undefined || typeof parseLength !== 'function') return false
  parser._parseLength = function boundedParseLength (this: PacketParser): boolean {
    const done = parseLength.call(this)
    if (done && this.packet.length > maxBytes) {
      this._emitError(new PacketTooLargeError(`MQTT packet of ${this.packet.length} bytes: at most ${maxBytes}`))
      return false
    }
    return done
  }
  return true
}

/**
 * Bounds the packets `client` may send to `maxBytes` (remaining length). False when the parser
 * is not the one this was written for (the bound is then not enforced: the caller logs it).
 *
 * @example
 * limitPacketSize(broker.handle(socket), 1024 * 1024)
 */
export function limitPacketSize (client: Client, maxBytes: number): boolean {
  return limitParser((client as unknown as { _parser?: PacketParser })._parser, maxBytes)
}
