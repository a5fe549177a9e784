/**
 * Issue #16: the server's clock, not the client's, orders poll cursors. A far-future client
 * `timestamp` (9999-12-31) must not make every cursor-less poll answer at once forever, and a
 * far-past one must not hide the item from cursors taken before it was stored. Since issue #23
 * such a timestamp is replaced by the server's (the answered timestamp is the cursor). Runs on SQLite, and on PostgreSQL with
 * DEVICEHUB_TEST_PG_URL.
 */
import t from 'tap'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, call, listen, sleep } from '../../fixtures/messaging.js'

const FUTURE = '9999-12-31T23:59:59.999'
const PAST = '1970-01-01T00:00:01.000'

for (const kind of ['notification', 'command'] as const) {
  t.test(`${kind}s with client timestamps far in the future or past do not poison cursors`, async (t) => {
    const h = await createTestApp(t)
    const base = await listen(t, h)
    const device = await addDevice(h)
    const token = h.adminToken
    const name = (body: Record<string, unknown>): Record<string, unknown> => kind === 'command' ? { command: 'c', ...body } : { notification: 'n', ...body }
    const post = (body: Record<string, unknown>): Promise<{ status: number, body: any }> => // eslint-disable-line @typescript-eslint/no-explicit-any
      call(`${base}/device/${device}/${kind}`, token, { method: 'POST', body: name(body) })
    const poll = (query: string): Promise<{ status: number, body: any }> => // eslint-disable-line @typescript-eslint/no-explicit-any
      call(`${base}/device/${device}/${kind}/poll?${query}`, token)
    const pollMany = (query: string): Promise<{ status: number, body: any }> => // eslint-disable-line @typescript-eslint/no-explicit-any
      call(`${base}/device/${kind}/poll?${query}`, token)

    const before = (await call(`${base}/info`, token)).body.serverTimestamp as string
    await sleep(5)
    const future = await post({ timestamp: FUTURE })
    t.equal(future.status, 201)
    t.ok(future.body.timestamp < FUTURE && future.body.timestamp > before, 'a 9999 client timestamp is replaced by the server time (#23)')
    const past = await post({ timestamp: PAST })
    t.equal(past.status, 201)
    const plain = await post({})
    t.equal(plain.status, 201)

    // Cursor-less polls: "from now", so none of the stored items, client timestamps or not.
    t.same((await poll('waitTimeout=0')).body, [], 'a cursor-less poll does not answer the 9999 item')
    t.same((await pollMany('waitTimeout=0')).body, [], 'nor does a cursor-less poll of every device')
    const started = Date.now()
    const parkedPoll = await poll('waitTimeout=1')
    t.same(parkedPoll.body, [], 'a waiting cursor-less poll waits instead of answering at once')
    t.ok(Date.now() - started >= 900, 'it waited for its timeout')

    // A cursor taken before the writes sees each of them once, in the server's order.
    const all = await poll(`timestamp=${encodeURIComponent(before)}&waitTimeout=0`)
    t.same(all.body.map((i: { id: number }) => i.id), [future.body.id, past.body.id, plain.body.id], 'server order, the 1970 item included')
    const shown = all.body.map((i: { timestamp: string }) => i.timestamp)
    t.same(shown, [...shown].sort(), 'shown with the server timestamps, in order (#23)')
    const last = all.body[2].timestamp as string
    t.same((await poll(`timestamp=${encodeURIComponent(last)}&waitTimeout=0`)).body, [], 're-polling with the last server timestamp repeats nothing')

    // Live: a parked cursor-less poll gets the next far-future item once.
    const live = poll('waitTimeout=10')
    await sleep(300)
    const next = await post({ timestamp: FUTURE })
    t.same((await live).body.map((i: { id: number }) => i.id), [next.body.id], 'a parked poll gets a new 9999 item live')
    t.same((await poll('waitTimeout=0')).body, [], 'and cursor-less polls still answer nothing')
  })
}

t.test('waiting for a command update: a far-future or far-past client timestamp on the command does not hide its update', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  const token = h.adminToken
  for (const timestamp of [FUTURE, PAST]) {
    const command = await call(`${base}/device/${device}/command`, token, { method: 'POST', body: { command: 'c', timestamp } })
    t.equal(command.status, 201)
    const wait = call(`${base}/device/${device}/command/${command.body.id}/poll?waitTimeout=10`, token)
    await sleep(300)
    const started = Date.now()
    t.equal((await call(`${base}/device/${device}/command/${command.body.id}`, token, { method: 'PUT', body: { status: 'done' } })).status, 204)
    const answer = await wait
    t.same([answer.status, answer.body.id, answer.body.status], [200, command.body.id, 'done'], `the wait answers with the update (${timestamp})`)
    t.ok(Date.now() - started < 5000, 'at once, not at its timeout')
  }
})
