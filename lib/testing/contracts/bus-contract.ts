/**
 * The contract every bus passes (the memory doorbell, the PostgreSQL doorbell, a bus of your own),
 * runner-neutral: each check is a named async function that throws (node:assert/strict) when the
 * bus breaks the contract. It speaks only the `Bus` interface: delivery may be asynchronous, so it
 * waits for events instead of expecting them synchronously, and checks "nothing arrives" with a
 * short grace period. Every check makes its own bus and store and closes them.
 *
 * @example
 * import { busContract } from 'devicehub/testing'
 * for (const [name, check] of Object.entries(busContract)) {
 *   test(name, () => check({ createBus: () => createMemoryDoorbell(), openStore: () => openSqliteStore(':memory:') }))
 * }
 */
import assert from 'node:assert/strict'
import type { Store } from '../../core/ports.js'
import type { Bus, BusEvent, MessageEvent } from '../../core/realtime/bus.js'

export interface BusContractSubject {
  /** A new bus (each check makes its own and closes it). */
  createBus(): Bus | Promise<Bus>
  /** A migrated store of the dialect the bus rides on (transactions, afterCommit, notify). */
  openStore(): Store | Promise<Store>
  /** How long "nothing arrives" is watched (default 100 ms). */
  graceMs?: number
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function message (id: number, fields: Partial<MessageEvent> = {}): MessageEvent {
  return { kind: 'notification', id, deviceId: 'contract-device', networkId: 1, deviceTypeId: 2, name: 'temperature', ...fields }
}

interface Collector {
  events: BusEvent[]
  off: () => void
  waitFor(n: number): Promise<void>
}

function collect (bus: Bus): Collector {
  const events: BusEvent[] = []
  const off = bus.subscribe((event) => { events.push(event) })
  return {
    events,
    off,
    async waitFor (n) {
      const deadline = Date.now() + 5000
      while (events.length < n) {
        if (Date.now() > deadline) throw new assert.AssertionError({ message: `expected ${n} events, got ${events.length}` })
        await sleep(5)
      }
    }
  }
}

const idsOf = (events: BusEvent[]): unknown[] => events.map((event) => 'id' in event ? event.id : event.kind)

/** Runs `check` with a fresh bus and store, closing both whatever happens. */
async function withBus (subject: BusContractSubject, check: (bus: Bus, store: Store) => Promise<void>): Promise<void> {
  const bus = await subject.createBus()
  const store = await subject.openStore()
  try {
    await check(bus, store)
  } finally {
    await bus.close()
    await store.close()
  }
}

export type BusCheck = (subject: BusContractSubject) => Promise<void>

export const busContract: Record<string, BusCheck> = {
  async 'delivers a published message event, with every field, to every subscriber' (subject) {
    await withBus(subject, async (bus) => {
      const a = collect(bus)
      const b = collect(bus)
      const sent = message(7, { kind: 'command-update', networkId: null, deviceTypeId: null, name: '$device-add' })
      await bus.publish(sent)
      await a.waitFor(1)
      await b.waitFor(1)
      assert.deepEqual(a.events, [sent])
      assert.deepEqual(b.events, [sent])
    })
  },

  async 'delivers control events as the union members they are' (subject) {
    await withBus(subject, async (bus) => {
      const c = collect(bus)
      const sent: BusEvent[] = [
        { kind: 'plugin', pluginId: 3, topic: 'plugin_topic_a' },
        { kind: 'revoke', userId: 5, what: 'rights' },
        { kind: 'revoke', userId: 5, what: 'plugin', topic: 'plugin_topic_a' },
        { kind: 'revoke', userId: 5, what: 'tokens', keptTokenId: 'abc' },
        { kind: 'stale-reads' }
      ]
      for (const event of sent) await bus.publish(event)
      await c.waitFor(sent.length)
      assert.deepEqual(c.events, sent)
    })
  },

  async 'keeps the publish order for each subscriber' (subject) {
    await withBus(subject, async (bus) => {
      const c = collect(bus)
      for (let id = 1; id <= 20; id++) await bus.publish(message(id))
      await c.waitFor(20)
      assert.deepEqual(idsOf(c.events), Array.from({ length: 20 }, (_, i) => i + 1))
    })
  },

  async 'stops delivering after unsubscribe (idempotent)' (subject) {
    await withBus(subject, async (bus) => {
      const kept = collect(bus)
      const dropped = collect(bus)
      dropped.off()
      dropped.off()
      await bus.publish(message(1))
      await kept.waitFor(1)
      await sleep(subject.graceMs ?? 100)
      assert.equal(dropped.events.length, 0)
    })
  },

  async 'inside a transaction: delivered after commit, never on rollback' (subject) {
    await withBus(subject, async (bus, store) => {
      const grace = subject.graceMs ?? 100
      const c = collect(bus)
      await store.transaction(async (tx) => {
        await bus.publish(message(1), tx)
        await sleep(grace)
        assert.equal(c.events.length, 0, 'nothing before commit')
      })
      await c.waitFor(1)
      assert.deepEqual(idsOf(c.events), [1])
      await store.transaction(async (tx) => {
        await bus.publish(message(2), tx)
        throw new Error('roll back')
      }).catch(() => undefined)
      await bus.publish(message(3))
      await c.waitFor(2)
      await sleep(grace)
      assert.deepEqual(idsOf(c.events), [1, 3], 'the rolled-back event never arrives')
    })
  },

  async 'a throwing subscriber does not stop delivery to the others' (subject) {
    await withBus(subject, async (bus) => {
      bus.subscribe(() => { throw new Error('listener bug') })
      const c = collect(bus)
      await bus.publish(message(1))
      await c.waitFor(1)
      assert.equal(c.events.length, 1)
    })
  },

  async 'delivers nothing after close' (subject) {
    const bus = await subject.createBus()
    const c = collect(bus)
    await bus.close()
    await bus.publish(message(1)).catch(() => undefined)
    await sleep(subject.graceMs ?? 100)
    assert.equal(c.events.length, 0)
  }
}
