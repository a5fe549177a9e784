/**
 * The contract of the message log (`hub.log`): one write path for both kinds that announces every
 * committed write once on the bus, and a mark below which a reader of the feed finds everything
 * committed, so that a reader resuming from its cursor loses and repeats nothing, whatever the
 * concurrency of the writers. Runner-neutral: each check is a named async function that throws
 * (node:assert/strict). Every check opens its own log and closes it.
 *
 * @example
 * import { messageLogContract } from 'devicehub/testing'
 * for (const [name, check] of Object.entries(messageLogContract)) {
 *   test(name, () => check({
 *     open: async () => { const hub = await createDeviceHub({ store, admin }); return { ...hub, close: () => hub.close() } }
 *   }))
 * }
 */
import assert from 'node:assert/strict'
import type { CommandRecord, NewCommand } from '../../core/commands/command-ports.js'
import type { Store } from '../../core/ports.js'
import type { Bus, MessageEvent } from '../../core/realtime/bus.js'
import type { LogCursor } from '../../core/realtime/log-cursor.js'
import { LOG_ORIGIN } from '../../core/realtime/log-cursor.js'
import type { MessageLog } from '../../core/realtime/message-log.js'

/** One open log: the log, the store it writes to, the bus its events reach listeners on (in log order). */
export interface OpenMessageLog {
  log: MessageLog
  store: Store
  bus: Bus
  close(): Promise<void>
}

export interface MessageLogContractSubject {
  /** A log over a fresh, migrated store (each check opens its own). */
  open(): Promise<OpenMessageLog>
}

export type MessageLogCheck = (subject: MessageLogContractSubject) => Promise<void>

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const SCOPE = { networkIds: 'all', deviceTypeIds: 'all' } as const

function notification (deviceId: string, name: string): {
  kind: 'notification', input: { notification: string, deviceId: string, networkId: number, deviceTypeId: number, parameters: null }
} {
  return { kind: 'notification', input: { notification: name, deviceId, networkId: 1, deviceTypeId: 1, parameters: null } }
}

function command (deviceId: string, name: string): { kind: 'command', input: NewCommand } {
  return {
    kind: 'command',
    input: {
      command: name, deviceId, networkId: 1, deviceTypeId: 1, userId: null, parameters: null, lifetime: null, status: null, result: null
    }
  }
}

/** Opens a log with devices `log-dev` and `feed-dev-0..3` in network 1 and device type 1 (reads join the device). */
async function withLog (
  subject: MessageLogContractSubject, check: (open: OpenMessageLog, events: MessageEvent[], resyncs: () => number) => Promise<void>
): Promise<void> {
  const open = await subject.open()
  for (const id of ['log-dev', 'feed-dev-0', 'feed-dev-1', 'feed-dev-2', 'feed-dev-3']) {
    await open.store.devices.insert({ id, name: id, data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  }
  const events: MessageEvent[] = []
  let resyncs = 0
  const off = open.bus.subscribe((event) => {
    if (event.kind === 'notification' || event.kind === 'command' || event.kind === 'command-update') events.push(event)
    else if (event.kind === 'resync') resyncs++
  })
  try {
    await check(open, events, () => resyncs)
  } finally {
    off()
    await open.close()
  }
}

async function until (condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000
  while (!condition()) {
    if (Date.now() > deadline) throw new assert.AssertionError({ message: `timed out waiting for ${what}` })
    await sleep(5)
  }
}

export const messageLogContract: Record<string, MessageLogCheck> = {
  async 'append writes both kinds and announces each committed write once, with its record' (subject) {
    await withLog(subject, async ({ log }, events) => {
      const n = await log.append(notification('log-dev', 'temperature'))
      const c = await log.append(command('log-dev', 'reboot'))
      const u = await log.append({ kind: 'command-update', deviceId: 'log-dev', id: c.id, patch: { status: 'done' } }) as CommandRecord
      assert.equal(u.status, 'done')
      assert.ok(u.lastUpdated > c.stamp, 'an update is stamped after its insert')
      await until(() => events.length >= 3, 'three events')
      await sleep(50)
      assert.deepEqual(events.map((e) => [e.kind, e.id]), [['notification', n.id], ['command', c.id], ['command-update', c.id]])
      assert.equal(events[0]!.name, 'temperature')
      const missing = await log.append({ kind: 'command-update', deviceId: 'log-dev', id: c.id + 1000, patch: { status: 'x' } })
      assert.equal(missing, undefined, 'an update of a command that is not there writes nothing')
      await sleep(50)
      assert.equal(events.length, 3, 'and announces nothing')
    })
  },

  async 'once caughtUp() resolves, the bus has announced every write acknowledged before it' (subject) {
    await withLog(subject, async ({ log }, events) => {
      for (let round = 0; round < 5; round++) {
        const written = await Promise.all([
          log.append(command('feed-dev-0', `c${round}`)), log.append(notification('feed-dev-1', `n${round}`))
        ])
        await log.caughtUp()
        const heard = new Set(events.map((e) => `${e.kind}:${e.id}`))
        assert.ok(heard.has(`command:${written[0].id}`) && heard.has(`notification:${written[1].id}`), `round ${round}: both announced`)
      }
    })
  },

  async 'append inside a transaction follows it: nothing on rollback' (subject) {
    await withLog(subject, async ({ log, store }, events, resyncs) => {
      await store.transaction(async (tx) => {
        await log.append(notification('log-dev', '$device-add'), tx)
        throw new Error('roll back')
      }).catch(() => undefined)
      const kept = await store.transaction((tx) => log.append(notification('log-dev', '$device-add'), tx))
      // Where stamps are drawn outside the transaction (PostgreSQL's lock-free draw), the rolled-back
      // write left a hole before the kept one: a log in stamp order announces it with a resync
      // (every reader reads the log again) once the hole has settled.
      await until(() => events.length >= 1 || resyncs() > 0, 'the committed event, or a resync past a hole')
      await sleep(50)
      assert.ok(events.every((e) => e.id === kept.id && e.name === '$device-add'), 'only the committed write is announced')
      assert.ok(events.length <= 1, 'once')
      const rows = await store.notifications.query({ scope: SCOPE, deviceIds: ['log-dev'], sortField: 'timestamp' })
      assert.deepEqual(rows.map((r) => r.id), [kept.id], 'the rolled-back row is gone')
    })
  },

  async 'concurrent appends: stamps and ids grow together, one event each' (subject) {
    await withLog(subject, async ({ log }, events) => {
      const rows = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(notification(`feed-dev-${i % 4}`, `n${i}`))))
      const sorted = [...rows].sort((a, b) => a.id - b.id)
      for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i]!.stamp > sorted[i - 1]!.stamp, `stamps follow ids at ${sorted[i]!.id}`)
      await until(() => events.length >= rows.length, 'one event per append')
      assert.deepEqual(events.map((e) => e.id).sort((a, b) => a - b), sorted.map((r) => r.id))
    })
  },

  async 'updates of one command keep call order, beside updates of other commands' (subject) {
    await withLog(subject, async ({ log, store }, events) => {
      const ids: number[] = []
      for (const name of ['a', 'b', 'c']) ids.push((await log.append(command('log-dev', name))).id)
      // 60 updates, four per event-loop turn, so that batches of several commands are in flight at once.
      const calls: Array<Promise<CommandRecord | undefined>> = []
      for (let i = 0; i < 60; i++) {
        calls.push(log.append({ kind: 'command-update', deviceId: 'log-dev', id: ids[i % 3]!, patch: { status: `s${i}` } }))
        if (i % 4 === 3) await new Promise((resolve) => setImmediate(resolve))
      }
      const written = await Promise.all(calls)
      const expected = (c: number): string[] => Array.from({ length: 20 }, (_, k) => `s${3 * k + c}`)
      for (let c = 0; c < 3; c++) {
        const mine = written.filter((_, i) => i % 3 === c)
        assert.deepEqual(mine.map((r) => r?.status), expected(c), 'each caller gets its own update')
        assert.ok(mine.every((r, k) => k === 0 || r!.lastUpdated > mine[k - 1]!.lastUpdated), 'each stamped after the one called before')
        assert.equal((await store.commands.findById(ids[c]!))?.status, `s${57 + c}`, 'the last call is the last word')
      }
      await until(() => events.filter((e) => e.kind === 'command-update').length >= 60, 'one event per update')
      for (let c = 0; c < 3; c++) {
        const mine = events.filter((e) => e.kind === 'command-update' && e.id === ids[c])
        const told = mine.map((e) => (e.record as CommandRecord | undefined)?.status ?? expected(c)[mine.indexOf(e)])
        assert.deepEqual(told, expected(c), 'the events of a command in call order')
      }
    })
  },

  async 'a reader that reads after its cursor up to the mark gets every id once under concurrent writers' (subject) {
    await withLog(subject, async (open) => {
      const { log } = open
      let total: number | undefined
      const writers = Array.from({ length: 8 }, async (_, w) => {
        const ids: number[] = []
        for (let i = 0; i < 40; i++) ids.push((await log.append(notification(`feed-dev-${w % 4}`, `w${w}-${i}`))).id)
        return ids
      })
      const written = Promise.all(writers).then((lists) => { total = lists.flat().length; return lists.flat() })
      const seen: number[] = []
      let after: LogCursor = LOG_ORIGIN
      // As every reader reads: strictly after the cursor, up to the mark, never past it.
      const deadline = Date.now() + 30_000
      while (total === undefined || seen.length < total) {
        if (Date.now() > deadline) throw new assert.AssertionError({ message: `read ${seen.length} of ${total ?? '?'} ids in 30 s` })
        const mark = await log.mark()
        const page = await log.readAfter('notification', { scope: SCOPE }, after, mark, 50)
        for (const row of page) {
          assert.ok(row.stamp > after.clock && row.stamp <= mark.clock, `read ${row.stamp} outside (${after.clock}, ${mark.clock}]`)
          seen.push(row.id)
        }
        const last = page[page.length - 1]
        after = page.length === 50 ? { ...after, clock: last!.stamp, notification: last!.id } : mark
        if (page.length < 50) await sleep(2)
      }
      const ids = (await written).sort((a, b) => a - b)
      assert.deepEqual([...seen].sort((a, b) => a - b), ids, 'every written id read exactly once')
    })
  }
}
