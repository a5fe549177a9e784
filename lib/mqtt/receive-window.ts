/**
 * MQTT 5 Receive Maximum for what the server sends (MQTT 5 §3.3.4, §4.9): at most the client's
 * CONNECT receive maximum QoS 1 and 2 PUBLISHes may await its acknowledgement. aedes 1.2 has no
 * such bound, so the MQTT 5 front end holds the publishes past it, in order, and sends the next
 * one each time a PUBACK frees a slot. What it holds is bounded: past `maxHeldBytes` the client,
 * which neither acknowledges nor lets go, is refused (`onOverflow`).
 */

export interface ReceiveWindowOptions {
  /** The client's receive maximum (65,535 when its CONNECT has none). */
  limit: number
  /** Bytes of publishes held at most (MqttLimits.maxBufferedBytes). */
  maxHeldBytes: number
  /** Writes one publish to the client. */
  send(bytes: Buffer): void
  /** Called once when more than `maxHeldBytes` are held. */
  onOverflow(): void
}

export interface ReceiveWindow {
  /** A PUBLISH for the client: sent now (QoS 0, or a free slot), else held. */
  publish(qos: number, messageId: number | undefined, bytes: Buffer): void
  /** The client acknowledged `messageId` (PUBACK): its slot goes to the oldest held publish. */
  acknowledged(messageId: number | undefined): void
  /** Publishes awaiting acknowledgement (sent, not held). */
  readonly inFlight: number
}

/**
 * @example
 * const window = createReceiveWindow({ limit: 2, maxHeldBytes: 1 << 19, send: (b) => socket.write(b), onOverflow: () => socket.destroy() })
 */
export function createReceiveWindow (options: ReceiveWindowOptions): ReceiveWindow {
  const { limit, maxHeldBytes, send } = options
  const unacknowledged = new Set<number>()
  const held: Array<{ messageId: number, bytes: Buffer }> = []
  let heldBytes = 0
  let overflowed = false

  const sendNow = (messageId: number, bytes: Buffer): void => {
    unacknowledged.add(messageId)
    send(bytes)
  }

  return {
    publish (qos, messageId, bytes) {
      if (qos === 0 || messageId === undefined) {
        send(bytes)
      } else if (held.length === 0 && unacknowledged.size < limit) {
        sendNow(messageId, bytes)
      } else {
        held.push({ messageId, bytes })
        heldBytes += bytes.length
        if (heldBytes > maxHeldBytes && !overflowed) {
          overflowed = true
          options.onOverflow()
        }
      }
    },
    acknowledged (messageId) {
      if (messageId === undefined || !unacknowledged.delete(messageId)) return
      while (held.length > 0 && unacknowledged.size < limit) {
        const next = held.shift()!
        heldBytes -= next.bytes.length
        sendNow(next.messageId, next.bytes)
      }
    },
    get inFlight () {
      return unacknowledged.size
    }
  }
}

/**
 * The server's own receive maximum (the CONNACK's, MqttLimits.maxInflightInbound): inbound QoS 2
 * publishes awaiting PUBREL. aedes bounds them too, but closes the connection in silence; the
 * front end counts them first, so an MQTT 5 client is told why (DISCONNECT 0x93).
 *
 * @example
 * const inbound = createInboundWindow(100)
 * if (!inbound.received(packet)) refuse()
 */
export function createInboundWindow (limit: number): { received(packet: { cmd: string, qos?: number, messageId?: number }): boolean } {
  const awaitingRelease = new Set<number>()
  return {
    received (packet) {
      const id = packet.messageId ?? 0
      if (packet.cmd === 'pubrel') awaitingRelease.delete(id)
      if (packet.cmd !== 'publish' || packet.qos !== 2 || awaitingRelease.has(id)) return true
      awaitingRelease.add(id)
      return limit <= 0 || awaitingRelease.size <= limit
    }
  }
}

export interface AnswerWait {
  /** A QoS 1 or 2 publish of the client was handed to aedes. */
  handed(messageId: number): void
  /** aedes answered it (PUBACK, PUBREC). */
  answered(messageId: number): void
  /** Refuses the client once every publish handed over is answered, at the latest after `maxWaitMs`. */
  refuse(reasonCode: number, reason: string): void
  /** A refusal waits: nothing more of the client's is handled. */
  readonly refusing: boolean
}

/**
 * A refusal that goes after aedes' answers (the 0x93 DISCONNECT): in a burst, the publish
 * refused is read before aedes has written the PUBRECs of those before it, which the
 * DISCONNECT would otherwise overtake and the connection's end lose. `fail` is called once.
 *
 * @example
 * const answers = createAnswerWait(1000, (code, reason) => void front.disconnect(code, reason))
 * if (!inbound.received(packet)) answers.refuse(0x93, 'Receive maximum exceeded')
 */
export function createAnswerWait (maxWaitMs: number, fail: (reasonCode: number, reason: string) => void): AnswerWait {
  const unanswered = new Set<number>()
  let refusal: (() => void) | undefined
  let failed = false
  const failOnce = (): void => {
    if (failed) return
    failed = true
    refusal?.()
  }
  return {
    handed (messageId) {
      unanswered.add(messageId)
    },
    answered (messageId) {
      unanswered.delete(messageId)
      if (refusal !== undefined && unanswered.size === 0) failOnce()
    },
    refuse (reasonCode, reason) {
      if (refusal !== undefined) return
      refusal = () => fail(reasonCode, reason)
      if (unanswered.size === 0) return failOnce()
      // aedes that never answers (a store failure) holds the refusal back this long at most.
      setTimeout(failOnce, maxWaitMs).unref()
    },
    get refusing () {
      return refusal !== undefined
    }
  }
}
