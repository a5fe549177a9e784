/**
 * The QoS a SUBACK grants. aedes 1.2 answers a SUBSCRIBE with the QoS asked for, whatever
 * `authorizeSubscribe` returns (its SUBACK is built from the packet before the hook runs), so a
 * subscription asking QoS 2 was granted 2 although devicehub delivers at most QoS 1. The QoS
 * asked for is lowered to {@link MAX_GRANTED_QOS} as the packet is read, before aedes handles it:
 * the SUBACK, the delivery and the stored session then agree (a server may grant less than asked,
 * MQTT 3.1.1 §3.8.4, MQTT 5 §3.9.3).
 */
import type { Client } from 'aedes'

/** The highest QoS devicehub publishes with (pushes are QoS 0 or 1). */
export const MAX_GRANTED_QOS = 1

interface PacketSource {
  prependListener(event: 'packet', listener: (packet: { cmd?: string, subscriptions?: Array<{ qos: number }> }) => void): unknown
}

/**
 * Lowers the QoS every SUBSCRIBE of `client` asks for to {@link MAX_GRANTED_QOS}. False when the
 * client's parser is not the one this was written for (the caller logs it).
 *
 * @example
 * grantAtMostDelivered(broker.handle(socket))
 */
export function grantAtMostDelivered (client: Client): boolean {
  const parser = (client as unknown as { _parser?: Partial<PacketSource> })._parser
  if (typeof parser?.prependListener !== 'function') return false
  // Before aedes' own listener: it queues or handles the very packet object seen here.
  parser.prependListener('packet', (packet) => {
    if (packet.cmd !== 'subscribe' || !Array.isArray(packet.subscriptions)) return
    for (const subscription of packet.subscriptions) {
      if (subscription.qos > MAX_GRANTED_QOS) subscription.qos = MAX_GRANTED_QOS
    }
  })
  return true
}
