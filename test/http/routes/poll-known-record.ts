/**
 * A one-device poll whose cursor lies just before the device's newest message is answered from
 * the log's memory of that message (`MessageLog.knownAfter`), with no read of the store; anything
 * the memory cannot vouch for (an update since, two messages after the cursor) is read. Runs on
 * SQLite and, with DEVICEHUB_TEST_PG_URL, on PostgreSQL's ordered bus.
 */
import t from 'tap'
import type { TestApp } from '../../fixtures/app.js'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice } from '../../fixtures/messaging.js'

/** Whether the hub's log keeps its memory of each device's newest message. */
const remembers = (h: TestApp): boolean => h.store.dialect === 'sqlite' || process.env.DEVICEHUB_TEST_PG_DOORBELL === '1'

/** Counts the store's command feed reads (the backlog of a command poll). */
function countReads (h: TestApp): { readonly reads: number } {
  const feed = h.store.feed
  const commands = feed.commands.bind(feed)
  const counter = { reads: 0 }
  feed.commands = async (query) => {
    counter.reads++
    return commands(query)
  }
  return counter
}

async function postCommand (h: TestApp, device: string, command: string): Promise<{ id: number, timestamp: string }> {
  const res = await h.request('POST', `/device/${device}/command`, { body: { command } })
  if (res.status !== 201) throw new Error(`command: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

const poll = (h: TestApp, device: string, query: Record<string, string>) =>
  h.request('GET', `/device/${device}/command/poll`, { query: { waitTimeout: '0', ...query } })

/** A new app (its log takes its first mark as it starts: below it nothing is known per device) and device. */
async function deviceWithMark (t: Parameters<typeof createTestApp>[0]): Promise<{ h: TestApp, device: string }> {
  const h = await createTestApp(t)
  return { h, device: await addDevice(h) }
}

t.test('a device re-polling from the command before its newest is answered without a read', async (t) => {
  const { h, device } = await deviceWithMark(t)
  const first = await postCommand(h, device, 'first')
  const second = await postCommand(h, device, 'second')
  const counter = countReads(h)
  const res = await poll(h, device, { timestamp: first.timestamp })
  t.equal(res.status, 200)
  t.same(res.body.map((c: { id: number, command: string }) => [c.id, c.command]), [[second.id, 'second']])
  const reads = remembers(h) ? 0 : 1
  t.equal(counter.reads, reads, 'no read of the store')
  const named = await poll(h, device, { timestamp: first.timestamp, names: 'other' })
  t.same(named.body, [], 'a name filter the record does not pass: nothing, still without a read')
  t.equal(counter.reads, 2 * reads)
  const both = await poll(h, device, { timestamp: '2000-01-01T00:00:00.000' })
  t.same(both.body.map((c: { id: number }) => c.id), [first.id, second.id], 'two commands after the cursor: read')
  t.equal(counter.reads, 2 * reads + 1)
})

t.test('a command updated since it was written is read again, with its update', async (t) => {
  const { h, device } = await deviceWithMark(t)
  const first = await postCommand(h, device, 'first')
  const second = await postCommand(h, device, 'second')
  const put = await h.request('PUT', `/device/${device}/command/${second.id}`, { body: { status: 'done', result: { ok: true } } })
  t.equal(put.status, 204)
  const counter = countReads(h)
  const res = await poll(h, device, { timestamp: first.timestamp })
  t.same(res.body.map((c: { id: number, status: string, result: unknown }) => [c.id, c.status, c.result]),
    [[second.id, 'done', { ok: true }]], 'the command as it stands now')
  t.equal(counter.reads, 1, 'read from the store')
})
