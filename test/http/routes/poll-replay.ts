/**
 * Issue #23 over real sockets: re-polling from the last `timestamp` received, whatever
 * timestamps clients sent (1970, 2000, 9999, their own clock): every later
 * item once, never an earlier one again, over REST long polls, WebSocket subscriptions, SSE and
 * the plugin proxy's cursor.
 */
import t from 'tap'
import type { Test } from 'tap'
import { createTestApp } from '../../fixtures/app.js'
import type { TestApp } from '../../fixtures/app.js'
import { addDevice, call, listen } from '../../fixtures/messaging.js'
import { registerPlugin, startProxy, subscribed } from '../../fixtures/plugin-proxy.js'
import type { Frame, TestSocket } from '../../fixtures/websocket.js'
import { connectAs } from '../../fixtures/websocket.js'

type Kind = 'command' | 'notification'
type Item = { id: number, timestamp: string } & Record<string, unknown>

const KINDS: Kind[] = ['command', 'notification']
/** Client timestamps a client may send: far past, past, far future, none, its own clock. */
const CLIENT_TIMESTAMPS = ['1970-01-01T00:00:00.000', '2000-01-01T00:00:00.000', '9999-12-31T23:59:59.999', undefined, 'own', '1970-01-01T00:00:00.000']
/** A cursor before anything these tests store. */
const BEFORE = '2020-01-01T00:00:00.000'
/** Bounds every loop, so a server that repeats items fails instead of hanging. */
const MAX_ROUNDS = 20

function body (kind: Kind, name: string, timestamp: string | undefined): Record<string, unknown> {
  const sent = timestamp === 'own' ? new Date(Date.now() - 20).toISOString() : timestamp
  return { [kind]: name, ...(sent === undefined ? {} : { timestamp: sent }) }
}

/** Inserts one item per client timestamp over REST; returns their ids in insert order. */
async function insertAll (base: string, token: string, kind: Kind, device: string, prefix = 'x'): Promise<number[]> {
  const ids: number[] = []
  for (const [i, timestamp] of CLIENT_TIMESTAMPS.entries()) {
    const res = await call(`${base}/device/${device}/${kind}`, token, { method: 'POST', body: body(kind, `${prefix}${i}`, timestamp) })
    if (res.status !== 201) throw new Error(`insert: ${res.status} ${JSON.stringify(res.body)}`)
    ids.push(res.body.id)
  }
  return ids
}

function ascending (t: Test, items: Item[], what: string): void {
  const stamps = items.map((i) => i.timestamp)
  t.same(stamps, [...stamps].sort(), `${what}: timestamps ascend in delivery order`)
  t.equal(new Set(stamps).size, stamps.length, `${what}: no two items share a timestamp`)
}

for (const kind of KINDS) {
  t.test(`REST ${kind} polls: re-polling from the last timestamp received returns each item once, whatever clients sent`, async (t) => {
    const h = await createTestApp(t)
    const base = await listen(t, h)
    const device = await addDevice(h)
    const ids = await insertAll(base, h.adminToken, kind, device)
    for (const path of [`/device/${device}/${kind}/poll`, `/device/${kind}/poll`]) {
      const received: Item[] = []
      let cursor = BEFORE
      let rounds = 0
      for (; rounds < MAX_ROUNDS; rounds++) {
        // Two at a time, so that every page starts from a cursor the previous page returned.
        const page = await call(`${base}${path}?timestamp=${encodeURIComponent(cursor)}&waitTimeout=0&limit=2`, h.adminToken)
        t.equal(page.status, 200)
        if (page.body.length === 0) break
        received.push(...page.body)
        cursor = page.body[page.body.length - 1].timestamp
      }
      t.ok(rounds < MAX_ROUNDS, `${path}: the loop ends`)
      t.same(received.map((i) => i.id), ids, `${path}: every item once, in the server's order`)
      ascending(t, received, path)

      // Live: a parked poll from the last cursor gets the next item (a 1970 one) once; re-polling from it, nothing.
      const parked = call(`${base}${path}?timestamp=${encodeURIComponent(cursor)}&waitTimeout=30`, h.adminToken)
      const live = await call(`${base}/device/${device}/${kind}`, h.adminToken, { method: 'POST', body: body(kind, 'live', '1970-01-01T00:00:00.000') })
      const got = await parked
      t.same(got.body.map((i: Item) => i.id), [live.body.id], `${path}: the parked poll gets the new item`)
      ids.push(live.body.id)
      const after = await call(`${base}${path}?timestamp=${encodeURIComponent(got.body[0].timestamp)}&waitTimeout=0`, h.adminToken)
      t.same(after.body, [], `${path}: and re-polling from it answers nothing`)
    }
  })
}

/** Subscribes on a fresh connection; resolves once the stream delivered the items expected, then a sentinel. */
async function wsRound (t: Test, h: TestApp, base: string, kind: Kind, device: string, cursor: string, expected: number[], sentinel: string | undefined): Promise<Item[]> {
  const ws: TestSocket = await connectAs(t, h)
  const reply = await ws.request({ action: `${kind}/subscribe`, deviceId: device, timestamp: cursor, ...(kind === 'command' ? { limit: 100 } : {}) })
  t.equal(reply.status, 'success')
  // A live item after the backlog: the next push after the expected ones must be it, so nothing was repeated.
  const live = await call(`${base}/device/${device}/${kind}`, h.adminToken, { method: 'POST', body: body(kind, 'sentinel', sentinel) })
  const pushes = await ws.waitForPushes(expected.length + 1)
  await ws.close()
  const items = pushes.map((p: Frame) => p[kind] as Item)
  t.same(items.map((i) => i.id), [...expected, live.body.id], `subscribe from ${cursor}: the later items once, then the live one`)
  return items
}

for (const kind of KINDS) {
  t.test(`WebSocket ${kind}/subscribe from the last timestamp received: each item once`, async (t) => {
    const h = await createTestApp(t)
    const base = await listen(t, h)
    const device = await addDevice(h)
    const ids = await insertAll(base, h.adminToken, kind, device)
    const first = await wsRound(t, h, base, kind, device, BEFORE, ids, '1970-01-01T00:00:00.000')
    ascending(t, first, 'WebSocket')
    // Subscribing again from the last timestamp received: only what came after it.
    let cursor = first[first.length - 1]!.timestamp
    for (const sentinel of ['9999-12-31T23:59:59.999', '2000-01-01T00:00:00.000', 'own']) {
      const round = await wsRound(t, h, base, kind, device, cursor, [], sentinel)
      t.ok(round[0]!.timestamp > cursor, 'the new item is after the cursor')
      cursor = round[0]!.timestamp
    }
  })
}

interface SseEvent { id: string, data: Item }

/** Opens an event stream with fetch; resolves once `count` events arrived (the stream is then closed). */
async function sseEvents (url: string, token: string, count: number, whenOpen: () => Promise<unknown>): Promise<SseEvent[]> {
  const controller = new AbortController()
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal })
  if (res.status !== 200) throw new Error(`stream: ${res.status} ${await res.text()}`)
  const events: SseEvent[] = []
  const decoder = new TextDecoder()
  let buffer = ''
  await whenOpen()
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const id = /^id: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (id !== undefined && data !== undefined) events.push({ id, data: JSON.parse(data) })
    }
    if (events.length >= count) break
  }
  controller.abort()
  return events
}

for (const kind of KINDS) {
  t.test(`SSE ${kind} streams from the last timestamp received: each item once`, async (t) => {
    const h = await createTestApp(t)
    const base = await listen(t, h)
    const device = await addDevice(h)
    const ids = await insertAll(base, h.adminToken, kind, device)
    let cursor = BEFORE
    let expected = ids
    for (const sentinel of ['1970-01-01T00:00:00.000', '9999-12-31T23:59:59.999', 'own']) {
      let live = 0
      const post = async (): Promise<void> => {
        live = (await call(`${base}/device/${device}/${kind}`, h.adminToken, { method: 'POST', body: body(kind, 'sentinel', sentinel) })).body.id
      }
      const events = await sseEvents(`${base}/device/${device}/${kind}/stream?timestamp=${encodeURIComponent(cursor)}`, h.adminToken, expected.length + 1, post)
      t.same(events.map((e) => e.data.id), [...expected, live], `stream from ${cursor}: the later items once, then the live one`)
      ascending(t, events.map((e) => e.data), 'SSE')
      t.same(events.map((e) => e.id), events.map((e) => String(Date.parse(`${e.data.timestamp}Z`))), 'each event id is its timestamp')
      cursor = events[events.length - 1]!.data.timestamp
      expected = []
    }
  })
}

t.test('plugin proxy: resuming from the last cursor delivers each item once, whatever timestamps clients sent', async (t) => {
  const p = await startProxy(t)
  const plugin = await registerPlugin(p.h)
  const device = await addDevice(p.h)
  // An authenticated, unsubscribed connection keeps the plugin active across the resumes: the close of
  // its last connection deactivates it (P5), and racing that with the next connection is not this test's subject.
  const holder = await p.connect()
  t.equal((await holder.authenticate(plugin.accessToken)).s, 0)
  const first = await subscribed(p, plugin)
  const ids = [
    ...(await insertAll(p.rest, p.h.adminToken, 'notification', device)).map((id) => `n:${id}`),
    ...(await insertAll(p.rest, p.h.adminToken, 'command', device)).map((id) => `c:${id}`)
  ]
  const key = (event: { b: { notification?: Item, command?: Item } }): string =>
    event.b.notification !== undefined ? `n:${event.b.notification.id}` : `c:${event.b.command!.id}`
  const got = await first.waitDeliveries(ids.length)
  const keys = got.map((d) => key(d.event))
  t.same([...keys].sort(), [...ids].sort(), 'every item once')
  for (const kind of ['n:', 'c:']) t.same(keys.filter((k) => k.startsWith(kind)), ids.filter((k) => k.startsWith(kind)), `${kind} in the order stored`)
  first.close()
  await first.closed
  let cursor = got[got.length - 1]!.cursor
  for (const sentinel of ['1970-01-01T00:00:00.000', '9999-12-31T23:59:59.999']) {
    const next = await subscribed(p, plugin, { c: cursor })
    const live = await call(`${p.rest}/device/${device}/notification`, p.h.adminToken, { method: 'POST', body: body('notification', 'sentinel', sentinel) })
    const [delivery] = await next.waitDeliveries(1)
    t.equal(key(delivery!.event), `n:${live.body.id}`, 'after resuming from the last cursor, the first delivery is the new item')
    next.close()
    await next.closed
    cursor = delivery!.cursor
  }
})
