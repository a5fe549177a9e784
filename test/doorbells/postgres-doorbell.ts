import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import type { Logger } from '../../lib/core/ports.js'
import type { JsonObject } from '../../lib/core/values.js'
import type { BusEvent, DrawLink, LocalEvent, MessageEvent } from '../../lib/core/realtime/bus.js'
import { createPostgresDoorbell, decodeDoorbellEvent, decodeDoorbellEvents, encodeDoorbellEvent } from '../../lib/doorbells/postgres-doorbell.js'
import type { PostgresDoorbell, PostgresDoorbellOptions } from '../../lib/doorbells/postgres-doorbell.js'
import { openPostgresStore } from '../../lib/store/dialects/postgres.js'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { busContract } from '../../lib/testing/contracts/bus-contract.js'
import { runContract } from '../fixtures/contract.js'
import { dropSchema, openTestStore, uniqueSchemaName } from '../fixtures/store.js'
import { postgresTest } from '../fixtures/pg-database.js'

const RESYNC: BusEvent = { kind: 'resync' }
const DOWN: BusEvent = { kind: 'connection', up: false }
const UP: BusEvent = { kind: 'connection', up: true }

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

function event (id: number, fields: Partial<MessageEvent> = {}): MessageEvent {
  return { kind: 'notification', id, deviceId: 'dev-1', networkId: 1, deviceTypeId: 2, name: 'temperature', ...fields }
}

t.test('the wire form keeps every field and rejects malformed payloads', async (t) => {
  const sample = event(42, { kind: 'command-update', networkId: null, deviceId: 'ä-dev', name: 'x'.repeat(128) })
  t.same(decodeDoorbellEvent(encodeDoorbellEvent(sample)), sample)
  t.ok(Buffer.byteLength(encodeDoorbellEvent(event(Number.MAX_SAFE_INTEGER, { deviceId: '€'.repeat(48), name: '€'.repeat(128) }))) < 1000,
    'the largest event is far below the 8000-byte NOTIFY limit')
  for (const bad of ['', 'nope', '{}', '[]', '["resync",0,"",null,null,""]', '["notification","1","d",1,2,"n"]',
    '["notification",1,"d","1",2,"n"]', '["notification",1,"d",1,2,null]', '["other",1,"d",1,2,"n"]']) {
    t.equal(decodeDoorbellEvent(bad), undefined, `rejects ${JSON.stringify(bad)}`)
  }
})

t.test('control events keep the six-element wire form of earlier versions', async (t) => {
  const cases: Array<[BusEvent, unknown[]]> = [
    [{ kind: 'plugin', pluginId: 3, topic: 'plugin_topic_a' }, ['plugin', 3, '', null, null, 'plugin_topic_a']],
    [{ kind: 'revoke', userId: 5, what: 'rights' }, ['revoke', 5, '', null, null, '']],
    [{ kind: 'revoke', userId: 5, what: 'plugin', topic: 'plugin_topic_a' }, ['revoke', 5, '', null, null, 'plugin_topic_a']],
    [{ kind: 'revoke', userId: 5, what: 'tokens', keptTokenId: 'abc' }, ['revoke', 5, 'password:abc', null, null, '']],
    [{ kind: 'revoke', userId: 5, what: 'tokens', keptTokenId: '' }, ['revoke', 5, 'password:', null, null, '']]
  ]
  for (const [event, wire] of cases) {
    t.same(JSON.parse(encodeDoorbellEvent(event as Exclude<BusEvent, LocalEvent>)), wire, `${event.kind} on the wire`)
    t.same(decodeDoorbellEvent(JSON.stringify(wire)), event, `${event.kind} read back`)
  }
})

t.test('the wire form carries the written record when it fits, and only a record of the same message', async (t) => {
  const record = { id: 42, notification: 'temperature', deviceId: 'dev-1', networkId: 1, deviceTypeId: 2, timestamp: 5, parameters: { a: 1 }, stamp: 5 }
  const carried = event(42, { record })
  t.same(decodeDoorbellEvent(encodeDoorbellEvent(carried)), carried, 'round trip with the record')
  const big = event(42, { record: { ...record, parameters: { blob: 'x'.repeat(9000) } } })
  t.same(decodeDoorbellEvent(encodeDoorbellEvent(big)), event(42), 'too large for NOTIFY: sent without it')
  t.ok(Buffer.byteLength(encodeDoorbellEvent(big)) < 1000)
  for (const other of [{ ...record, id: 43 }, { ...record, deviceId: 'dev-2' }, { ...record, notification: 'other' }, { ...record, stamp: '5' }, [record], 'record']) {
    const decoded = decodeDoorbellEvent(JSON.stringify([...JSON.parse(encodeDoorbellEvent(event(42))), other]))
    t.same(decoded, event(42), `a record that does not fit the event is dropped: ${JSON.stringify(other).slice(0, 60)}`)
  }
})


t.test('packed payloads: every row with its own link; the one-row forms of earlier versions still read', async (t) => {
  const record = { id: 6, notification: 'n', deviceId: 'b', networkId: 1, deviceTypeId: 2, timestamp: 12, parameters: null, stamp: 12 }
  const rows = [['notification', 5, 'a', 1, 2, 'n', null, 10, 11, 99], ['notification', 6, 'b', 1, 2, 'n', record, 11, 12, 99]]
  const packed = JSON.stringify(['notification', 6, '', null, null, '', rows, 11, 12, 99])
  t.same(decodeDoorbellEvents(packed), [
    event(5, { deviceId: 'a', name: 'n', order: { prev: 10, stamp: 11, nextXid: 99 } }),
    event(6, { deviceId: 'b', name: 'n', record, order: { prev: 11, stamp: 12, nextXid: 99 } })
  ])
  t.same(decodeDoorbellEvent(packed), event(6, { deviceId: '', networkId: null, deviceTypeId: null, name: '', order: { prev: 11, stamp: 12, nextXid: 99 } }),
    'the decoder of earlier versions reads the header alone: a link whose predecessor no event names')
  const single = JSON.stringify(rows[1])
  t.same(decodeDoorbellEvents(single), [event(6, { deviceId: 'b', name: 'n', record, order: { prev: 11, stamp: 12, nextXid: 99 } })],
    'the ten-element form of one row')
  t.same(decodeDoorbellEvents(encodeDoorbellEvent(event(7))), [event(7)], 'the six-element form')
  t.same(decodeDoorbellEvents(JSON.stringify(['plugin', 3, '', null, null, 'topic'])), [{ kind: 'plugin', pluginId: 3, topic: 'topic' }])
  const header = ['notification', 6, '', null, null, '']
  const broken = [
    [...header, [rows[0]], 11, 12, 99], // a pack of one row, or one that does not end at the header's stamp
    [...header, [rows[0], rows[0]!.slice(0, 9)], 11, 12, 99], // a short row
    [...header, [rows[0], ['command', ...rows[1]!.slice(1)]], 11, 12, 99], // another kind
    [...header, [rows[0], ['notification', 6, 'b', 1, 2, 'n', null, 11, '12', 99]], 11, 12, 99], // a bad stamp
    [...header, [rows[0], [...rows[1]!.slice(0, 6), rows, 11, 12, 99]], 11, 12, 99], // a pack in a pack
    [...header, rows, 11, 12] // no nextXid
  ]
  for (const bad of broken) t.same(decodeDoorbellEvents(JSON.stringify(bad)), [], `rejects ${JSON.stringify(bad).slice(0, 70)}`)
  t.same(decodeDoorbellEvents('nope'), [])
  const oversized = JSON.stringify(['notification', 5, 'a', 1, 2, 'n', { blob: 'x'.repeat(8000) }, 10, 11, 99])
  t.same(decodeDoorbellEvents(oversized), [], 'a payload longer than any NOTIFY is refused before it is parsed')
  t.equal(decodeDoorbellEvent(oversized), undefined)
  const nested = '['.repeat(3000) + ']'.repeat(3000)
  t.same(decodeDoorbellEvents(nested), [], 'a deeply nested payload is refused')
  t.equal(decodeDoorbellEvent(nested), undefined)
})

t.test('input packs (a multi-row insert\'s events built from its input): records rebuilt, every row linked; malformed ones refused', async (t) => {
  const parameters = { tricky: 'q " \\ ü' }
  const notifications = { first: [5, 11, 10], rows: [['a', 1, 2, 'n', null], ['b', 1, 2, 'm', parameters], ['c', null, null, 'big']] }
  const packed = JSON.stringify(['notification', 7, '', null, null, '', notifications, 12, 13, 99])
  const record = (id: number, deviceId: string, name: string, stamp: number, params: JsonObject | null) =>
    ({ id, notification: name, deviceId, networkId: 1, deviceTypeId: 2, timestamp: stamp, parameters: params, stamp })
  t.same(decodeDoorbellEvents(packed), [
    event(5, { deviceId: 'a', name: 'n', record: record(5, 'a', 'n', 11, null), order: { prev: 10, stamp: 11, nextXid: 99 } }),
    event(6, { deviceId: 'b', name: 'm', record: record(6, 'b', 'm', 12, parameters), order: { prev: 11, stamp: 12, nextXid: 99 } }),
    event(7, { deviceId: 'c', networkId: null, deviceTypeId: null, name: 'big', order: { prev: 12, stamp: 13, nextXid: 99 } })
  ], 'ids and stamps count up from the first; a row without fields has no record')
  t.same(decodeDoorbellEvent(packed), event(7, { deviceId: '', networkId: null, deviceTypeId: null, name: '', order: { prev: 12, stamp: 13, nextXid: 99 } }),
    'the decoder of earlier versions reads the header alone')
  const commands = { first: [8, 20, 3], rows: [['a', 1, 2, 'go', [4, null, 30, 'sent', { ok: true }]]] }
  t.same(decodeDoorbellEvents(JSON.stringify(['command', 8, '', null, null, '', commands, 19, 20, 5])), [event(8, {
    kind: 'command', deviceId: 'a', name: 'go', order: { prev: 3, stamp: 20, nextXid: 5 },
    record: {
      id: 8, command: 'go', deviceId: 'a', networkId: 1, deviceTypeId: 2, userId: 4, parameters: null, lifetime: 30, status: 'sent',
      result: { ok: true }, timestamp: 20, lastUpdated: 20, isUpdated: false, stamp: 20
    }
  })], 'a command\'s fields: userId, parameters, lifetime, status, result')
  const header = ['notification', 7, '', null, null, '']
  const body = (rows: unknown[], first: unknown = [5, 11, 10]) => ({ first, rows })
  const broken = [
    [...header, body(notifications.rows.slice(0, 2)), 12, 13, 99], // does not end at the header's id and stamp
    [...header, body(notifications.rows, [5, 11]), 12, 13, 99], // a short first
    [...header, body(notifications.rows, [5, '11', 10]), 12, 13, 99], // a bad stamp
    [...header, body([]), 12, 13, 99], // no rows
    [...header, body([...notifications.rows.slice(0, 2), ['c', null, null]]), 12, 13, 99], // a short row
    [...header, body([...notifications.rows.slice(0, 2), ['c', null, null, 'big', [1]]]), 12, 13, 99], // parameters not an object
    [...header, body([...notifications.rows.slice(0, 2), [7, null, null, 'big']]), 12, 13, 99], // a bad device id
    ['command-update', 7, '', null, null, '', notifications, 12, 13, 99], // updates are never sent so
    ['command', 8, '', null, null, '', { first: [8, 20, 3], rows: [['a', 1, 2, 'go', [4, null, 30, 7, null]]] }, 19, 20, 5], // a bad status
    ['command', 8, '', null, null, '', { first: [8, 20, 3], rows: [['a', null, 2, 'go', [4, null, 30, null, null]]] }, 19, 20, 5]
  ]
  for (const bad of broken) t.same(decodeDoorbellEvents(JSON.stringify(bad)), [], `rejects ${JSON.stringify(bad).slice(40, 130)}`)
})

postgresTest('the PostgreSQL doorbell', async (t, url) => {
  runPostgresTests(t, url)
})

function runPostgresTests (t: Tap, url: string): void {
  /** A channel of its own per test, so test files running in parallel never hear each other. */
  const newChannel = (): string => `devicehub_test_${randomBytes(6).toString('hex')}`

  const openHub = async (t: Tap, options: PostgresDoorbellOptions = {}): Promise<PostgresDoorbell> => {
    const doorbell = await createPostgresDoorbell(url, { reconnect: { initialDelayMs: 20, maxDelayMs: 200 }, ...options })
    t.teardown(() => doorbell.close())
    return doorbell
  }

  /** Collects a doorbell's events; `next()` resolves with the next one (or rejects after a timeout). */
  const record = (doorbell: PostgresDoorbell) => {
    // Message events as seen (a resync shows as `{ kind: 'resync' }`, without the message fields).
    const events: MessageEvent[] = []
    const waiters: Array<() => void> = []
    doorbell.subscribe((e) => {
      events.push(e as MessageEvent)
      for (const wake of waiters.splice(0)) wake()
    })
    return {
      events,
      async until (count: number, ms = 5000): Promise<MessageEvent[]> {
        const deadline = Date.now() + ms
        while (events.length < count) {
          if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${count} events, got ${events.length}`)
          await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), sleep(50)])
        }
        return events
      }
    }
  }

  const admin = async (t: Tap): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end())
    return client
  }

  t.test('the bus contract', async (t) => {
    const schemas: string[] = []
    t.teardown(async () => {
      for (const schema of schemas) await dropSchema(url, schema)
    })
    runContract(t, busContract, { make: async () => ({
      createBus: () => createPostgresDoorbell(url, { channel: newChannel() }),
      openStore: () => {
        const schema = uniqueSchemaName()
        schemas.push(schema)
        return openPostgresStore(url, { schema, maxConnections: 2 })
      },
      graceMs: 150
    }) })
  })

  t.test('every listener gets the same event object; a throwing one does not stop the rest', async (t) => {
    const doorbell = await openHub(t, { channel: newChannel() })
    const seen: BusEvent[][] = [[], [], []]
    doorbell.subscribe((e) => seen[0]!.push(e))
    doorbell.subscribe(() => { throw new Error('listener bug') })
    doorbell.subscribe((e) => seen[1]!.push(e))
    doorbell.subscribe((e) => seen[2]!.push(e))
    await doorbell.publish(event(1))
    await doorbell.publish(event(2))
    const deadline = Date.now() + 5000
    while (seen[2]!.length < 2 && Date.now() < deadline) await sleep(10)
    t.same(seen[0], [event(1), event(2)])
    for (const i of [0, 1]) {
      t.equal(seen[1]![i], seen[0]![i], `listener 2 got the very object of listener 1 (event ${i + 1})`)
      t.equal(seen[2]![i], seen[0]![i], `listener 3 got the very object of listener 1 (event ${i + 1})`)
    }
  })

  t.test('the LISTEN connection carries an application_name', async (t) => {
    const doorbell = await openHub(t, { channel: newChannel() })
    const named = await openHub(t, { channel: newChannel(), applicationName: 'devicehub-doorbell-b' })
    const check = await admin(t)
    const names = async (pid: number | undefined): Promise<unknown> =>
      (await check.query('select application_name from pg_stat_activity where pid = $1', [pid])).rows[0]?.application_name
    t.equal(await names(doorbell.listenerPid), 'devicehub-doorbell')
    t.equal(await names(named.listenerPid), 'devicehub-doorbell-b')
  })

  t.test('publish inside a committed transaction is delivered at commit, not before', async (t) => {
    const store = await openTestStore(t)
    const doorbell = await openHub(t, { channel: newChannel() })
    const seen = record(doorbell)
    const sent = event(7)
    await store.transaction(async (tx) => {
      await tx.networks.insert({ name: 'n', description: null })
      await doorbell.publish(sent, tx)
      await sleep(150)
      t.same(seen.events, [], 'nothing is delivered while the transaction is open')
    })
    t.same(await seen.until(1), [sent], 'delivered after commit, decoded exactly')
  })

  t.test('writes through the store channel ring with the record as written, unless it is too large', async (t) => {
    const store = await openTestStore(t)
    const channel = newChannel()
    const doorbell = await openHub(t, { channel })
    const seen = record(doorbell)
    const network = await store.networks.insert({ name: 'rec-net', description: null })
    const deviceType = await store.deviceTypes.insert({ name: 'rec-type', description: null })
    const ids = { networkId: network, deviceTypeId: deviceType }
    await store.devices.insert({ id: 'rec-dev', name: 'rec', data: null, ...ids, isBlocked: false })
    const base = { deviceId: 'rec-dev', ...ids }
    const n = await store.notifications.insert({ ...base, notification: 'n', parameters: { v: [1, 'ü'] } }, Date.now(), { channel, drawn: () => {} })
    const c = await store.commands.insert({ ...base, command: 'c', userId: 1, parameters: null, lifetime: 60, status: null, result: null }, Date.now(), { channel, drawn: () => {} })
    const u = await store.commands.update('rec-dev', c.id, { status: 'done', result: { ok: true } }, Date.now(), { channel, drawn: () => {} })
    const big = await store.notifications.insert({ ...base, notification: 'big', parameters: { blob: 'x'.repeat(9000) } }, Date.now(), { channel, drawn: () => {} })
    const events = await seen.until(4)
    t.same(events.map((e) => [e.kind, e.id]), [['notification', n.id], ['command', c.id], ['command-update', c.id], ['notification', big.id]])
    t.same(events[0]!.record, n, 'the notification as the store returned it')
    t.same(events[0]!.record, await store.notifications.findById(n.id), 'and as a read returns it')
    t.same(events[1]!.record, c, 'the command as inserted')
    t.same(events[2]!.record, u, 'the command as updated')
    t.match(events[2]!.record, { isUpdated: true, status: 'done', result: { ok: true } })
    t.equal(events[3]!.record, undefined, 'a record past the NOTIFY limit stays behind; listeners read the row')
  })

  t.test('ignoreWritesOf: those connections\' message events are dropped; their control events and other stores\' writes still come', async (t) => {
    const store = await openTestStore(t)
    const other = await openTestStore(t)
    const channel = newChannel()
    const doorbell = await openHub(t, { channel })
    doorbell.ignoreWritesOf(store.sessions)
    const seen = record(doorbell)
    const ring = { channel, drawn: () => {} }
    const write = async (on: typeof store, name: string) => {
      const networkId = await on.networks.insert({ name: `${name}-net`, description: null })
      const deviceTypeId = await on.deviceTypes.insert({ name: `${name}-type`, description: null })
      await on.devices.insert({ id: `${name}-dev`, name, data: null, networkId, deviceTypeId, isBlocked: false })
      const base = { deviceId: `${name}-dev`, networkId, deviceTypeId }
      const n = await on.notifications.insert({ ...base, notification: name, parameters: null }, Date.now(), ring)
      const c = await on.commands.insert({ ...base, command: name, userId: null, parameters: null, lifetime: null, status: null, result: null },
        Date.now(), ring)
      await on.commands.update(`${name}-dev`, c.id, { status: 'done' }, Date.now(), ring)
      return { n, c }
    }
    await write(store, 'own')
    t.ok(store.sessions.size > 0, 'the store knows its connections')
    const revoke: BusEvent = { kind: 'revoke', userId: 5, what: 'rights' }
    await store.transaction((tx) => doorbell.publish(revoke, tx))
    // Heard at commit, before the transaction is answered: not after its NOTIFY's round trip, which a
    // write the caller makes next (answered to this instance's waits directly) could overtake.
    t.same(seen.events.map((e) => e.kind), ['revoke'], 'the own revocation is heard at commit')
    const theirs = await write(other, 'theirs')
    const events = await seen.until(4)
    await sleep(100)
    t.same(seen.events.map((e) => e.kind), ['revoke', 'notification', 'command', 'command-update'],
      'the own store\'s message events are dropped, its revocation comes once, the other store\'s writes come')
    t.same(events.slice(1).map((e) => e.id), [theirs.n.id, theirs.c.id, theirs.c.id])

    // A connection that ends leaves the set.
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db)).rows[0]!.pid
    t.ok(store.sessions.has(pid), 'a connection of the pool is in the set')
    await (await admin(t)).query('select pg_terminate_backend($1)', [pid])
    const deadline = Date.now() + 5000
    while (store.sessions.has(pid) && Date.now() < deadline) await sleep(20)
    t.notOk(store.sessions.has(pid), 'and leaves it when it ends')
  })

  t.test('a statement of several rows rings once per pack of events that fits a payload; every row chained', async (t) => {
    const store = await openTestStore(t)
    const channel = newChannel()
    const listener = await admin(t)
    const payloads: string[] = []
    listener.on('notification', (message) => { if (message.channel === channel) payloads.push(message.payload ?? '') })
    await listener.query(`LISTEN ${channel}`)
    const doorbell = await openHub(t, { channel })
    const seen = record(doorbell)
    const network = await store.networks.insert({ name: 'pack-net', description: null })
    const deviceType = await store.deviceTypes.insert({ name: 'pack-type', description: null })
    const ids = { networkId: network, deviceTypeId: deviceType }
    await store.devices.insert({ id: 'pack-dev', name: 'pack', data: null, ...ids, isBlocked: false })
    const write = async (sizes: number[], blob = 'x') => {
      // The second row's name and parameters need every kind of JSON escaping.
      const tricky = 'q " b \\ c \u0001 \n ü € 𝄞'
      const list = sizes.map((size, i) => ({
        deviceId: 'pack-dev', ...ids, notification: i === 1 ? tricky : `n${i}`, parameters: { blob: blob.repeat(size), tricky }
      }))
      const heard = seen.events.length
      const sent = payloads.length
      const links = new Map<object, DrawLink>()
      const rows = await store.notifications.insertMany(list, Date.now(), { channel, drawn: (record, link) => links.set(record, link) })
      const events = (await seen.until(heard + rows.length)).slice(heard)
      t.same(events.map((e) => e.id), rows.map((r) => r.id), 'every row, in order')
      t.same(rows.map((r) => links.get(r)), events.map((e) => e.order), 'the statement tells each row the link its NOTIFY carries')
      t.same(events.map((e) => e.record), rows.map((r, i) => sizes[i]! > 7000 ? undefined : r), 'with its record unless too large')
      t.same(events.slice(1).map((e) => e.order!.prev), events.slice(0, -1).map((e) => e.order!.stamp), 'one unbroken chain')
      t.same(events.map((e) => e.order!.stamp), rows.map((r) => r.stamp))
      await sleep(50)
      return { rows, payloads: payloads.slice(sent) }
    }
    const small = await write(Array.from({ length: 16 }, () => 100))
    t.equal(small.payloads.length, 1, 'sixteen small rows: one payload')
    const many = await write(Array.from({ length: 60 }, () => 100))
    t.ok(many.payloads.length > 1 && many.payloads.length < 6, `sixty: as many payloads as the limit needs (${many.payloads.length})`)
    const large = await write([10, 3000, 3000, 9000, 10, 2000, 2000])
    // Rows fill a payload in order until the next does not fit: 10, 3000, 3000, 9000 (without its record), 10; then 2000, 2000.
    t.equal(large.payloads.length, 2, 'large records: as many to a payload as fit')
    // Three bytes a character: a payload is measured in bytes, not characters (one row of 6,000 bytes to a payload).
    const wide = await write([2000, 2000, 2000], '€')
    t.equal(wide.payloads.length, 3, 'multi-byte rows: as many payloads as their bytes need')
    const all = [...small.payloads, ...many.payloads, ...large.payloads, ...wide.payloads]
    t.ok(all.every((p) => Buffer.byteLength(p) < 8000), 'each below the NOTIFY limit')
    const single = await write([10])
    t.same(JSON.parse(single.payloads[0]!).slice(0, 6), ['notification', single.rows[0]!.id, 'pack-dev', network, deviceType, 'n0'],
      'one row: the ten-element form of earlier versions')
  })

  t.test('publish inside a rolled-back transaction is never delivered', async (t) => {
    const store = await openTestStore(t)
    const doorbell = await openHub(t, { channel: newChannel() })
    const seen = record(doorbell)
    await t.rejects(store.transaction(async (tx) => {
      await doorbell.publish(event(1), tx)
      throw new Error('rollback')
    }), { message: 'rollback' })
    // A later doorbell on the same channel proves the channel works and the first never came.
    await store.transaction((tx) => doorbell.publish(event(2), tx))
    await seen.until(1)
    await sleep(100)
    t.same(seen.events.map((e) => e.id), [2])
  })

  t.test('two doorbell instances hear each other, and themselves', async (t) => {
    const channel = newChannel()
    const store = await openTestStore(t)
    const a = await openHub(t, { channel })
    const b = await openHub(t, { channel })
    const other = await openHub(t, { channel: newChannel() })
    const seenA = record(a)
    const seenB = record(b)
    const seenOther = record(other)
    await store.transaction((tx) => a.publish(event(1, { kind: 'command' }), tx))
    await b.publish(event(2, { kind: 'command-update', networkId: null, deviceTypeId: null }))
    const expected = [event(1, { kind: 'command' }), event(2, { kind: 'command-update', networkId: null, deviceTypeId: null })]
    t.same(await seenA.until(2), expected)
    t.same(await seenB.until(2), expected)
    await sleep(100)
    t.same(seenOther.events, [], 'another channel hears nothing')
  })

  t.test('a killed LISTEN connection reconnects and wakes every listener with a resync', async (t) => {
    const channel = newChannel()
    const warnings: string[] = []
    const logger: Logger = { info: () => {}, debug: () => {}, error: () => {}, warn: (_obj, msg) => { warnings.push(String(msg)) } }
    const doorbell = await openHub(t, { channel, logger })
    const publisher = await openHub(t, { channel: newChannel() })
    const seen = record(doorbell)
    const second: BusEvent[] = []
    doorbell.subscribe((e) => second.push(e))
    const pid = doorbell.listenerPid
    t.type(pid, 'number')
    const killer = await admin(t)
    const killed = await killer.query('select pg_terminate_backend($1) as ok', [pid])
    t.equal(killed.rows[0].ok, true)
    t.same(await seen.until(3), [DOWN, UP, RESYNC], 'told the connection dropped, came back, then woken with a resync')
    t.same(second, [DOWN, UP, RESYNC], 'every listener is woken')
    t.ok(doorbell.connected)
    t.not(doorbell.listenerPid, pid, 'a new connection')
    t.ok(warnings.includes('doorbell lost its LISTEN connection; reconnecting'), 'the loss is logged')
    // Doorbells flow again on the new connection.
    await killer.query('select pg_notify($1, $2)', [channel, encodeDoorbellEvent(event(9))])
    t.same((await seen.until(4))[3], event(9))
    t.equal(publisher.connected, true, 'other doorbells are untouched')
  })

  t.test('reconnect retries with backoff while the server refuses, then resyncs', async (t) => {
    const channel = newChannel()
    const role = `devicehub_hub_${randomBytes(4).toString('hex')}`
    const admin1 = await admin(t)
    await admin1.query(`create role ${role} login`)
    t.teardown(async () => {
      await admin1.query(`alter role ${role} login`)
      await admin1.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role])
      await admin1.query(`drop role if exists ${role}`)
    })
    const roleUrl = new URL(url)
    roleUrl.username = role
    roleUrl.password = ''
    const warnings: string[] = []
    const logger: Logger = { info: () => {}, debug: () => {}, error: () => {}, warn: (_obj, msg) => { warnings.push(String(msg)) } }
    const doorbell = await createPostgresDoorbell(roleUrl.toString(), { channel, logger, reconnect: { initialDelayMs: 20, maxDelayMs: 80 } })
    t.teardown(() => doorbell.close())
    const seen = record(doorbell)
    // Refuse new logins, then kill the connection: reconnects fail until logins are allowed again.
    await admin1.query(`alter role ${role} nologin`)
    await admin1.query('select pg_terminate_backend($1)', [doorbell.listenerPid])
    const deadline = Date.now() + 5000
    while (warnings.filter((w) => w === 'doorbell reconnect failed').length < 3 && Date.now() < deadline) await sleep(20)
    t.ok(warnings.filter((w) => w === 'doorbell reconnect failed').length >= 3, 'keeps retrying')
    t.equal(doorbell.connected, false)
    t.same(seen.events, [DOWN], 'no resync before a connection is back')
    await admin1.query(`alter role ${role} login`)
    t.same(await seen.until(3), [DOWN, UP, RESYNC])
    t.ok(doorbell.connected)
  })

  t.test('a silently dead LISTEN connection is caught by the health check', async (t) => {
    // A TCP proxy whose existing connections can be frozen: bytes are swallowed, sockets stay
    // open, exactly like a dropped network path. New connections pass through normally.
    const target = new URL(url)
    const frozen = new Set<net.Socket>()
    const live = new Set<net.Socket>()
    const proxy = net.createServer((inbound) => {
      const outbound = net.connect(Number(target.port || 5432), target.hostname)
      live.add(inbound)
      inbound.on('data', (chunk) => { if (!frozen.has(inbound)) outbound.write(chunk) })
      outbound.on('data', (chunk) => { if (!frozen.has(inbound)) inbound.write(chunk) })
      const done = () => { inbound.destroy(); outbound.destroy(); live.delete(inbound) }
      inbound.on('close', done).on('error', done)
      outbound.on('close', done).on('error', done)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise<void>((resolve) => {
      for (const socket of live) socket.destroy()
      proxy.close(() => resolve())
    }))
    const proxied = new URL(url)
    proxied.hostname = '127.0.0.1'
    proxied.port = String((proxy.address() as net.AddressInfo).port)
    const channel = newChannel()
    const watched = await createPostgresDoorbell(proxied.toString(), { channel, healthCheckIntervalMs: 100, reconnect: { initialDelayMs: 20 } })
    t.teardown(() => watched.close())
    const seen = record(watched)
    const before = watched.listenerPid
    for (const socket of live) frozen.add(socket)
    t.same(await seen.until(3, 3000), [DOWN, UP, RESYNC], 'reconnected and resynced')
    t.not(watched.listenerPid, before)
    await watched.publish(event(4))
    t.same((await seen.until(4))[3], event(4), 'doorbells flow on the new connection')
  })

  t.test('malformed notifications are ignored; the next one is delivered', async (t) => {
    const channel = newChannel()
    const warnings: string[] = []
    const logger: Logger = { info: () => {}, debug: () => {}, error: () => {}, warn: (_obj, msg) => { warnings.push(String(msg)) } }
    const doorbell = await openHub(t, { channel, logger })
    const seen = record(doorbell)
    const sender = await admin(t)
    await sender.query('select pg_notify($1, $2)', [channel, 'garbage'])
    await sender.query('select pg_notify($1, $2)', [channel, encodeDoorbellEvent(event(3))])
    t.same(await seen.until(1), [event(3)])
    t.same(warnings, ['doorbell ignored a malformed notification'])
  })

  t.test('a throwing listener does not stop the others', async (t) => {
    const doorbell = await openHub(t, { channel: newChannel() })
    doorbell.subscribe(() => { throw new Error('listener bug') })
    const seen = record(doorbell)
    await doorbell.publish(event(5))
    t.same(await seen.until(1), [event(5)])
  })

  t.test('with a SQLite store the doorbell is sent after commit from the doorbell connection', async (t) => {
    const store = await openSqliteStore(':memory:')
    t.teardown(() => store.close())
    const doorbell = await openHub(t, { channel: newChannel() })
    const seen = record(doorbell)
    await t.rejects(store.transaction(async (tx) => {
      await doorbell.publish(event(1), tx)
      throw new Error('rollback')
    }))
    await store.transaction(async (tx) => {
      await doorbell.publish(event(2), tx)
      await sleep(100)
      t.same(seen.events, [], 'not before commit')
    })
    t.same((await seen.until(1)).map((e) => e.id), [2])
  })

  t.test('unsubscribe and close', async (t) => {
    const doorbell = await createPostgresDoorbell(url, { channel: newChannel() })
    const seen = record(doorbell)
    const extra: BusEvent[] = []
    const off = doorbell.subscribe((e) => extra.push(e))
    t.equal(doorbell.size, 2)
    off()
    t.equal(doorbell.size, 1)
    await doorbell.publish(event(1))
    await seen.until(1)
    t.same(extra, [], 'an unsubscribed listener hears nothing')
    const pid = doorbell.listenerPid
    await doorbell.close()
    t.equal(doorbell.connected, false)
    t.equal(doorbell.size, 0)
    const check = await admin(t)
    const deadline = Date.now() + 2000
    let rows = 1
    while (rows > 0 && Date.now() < deadline) {
      rows = (await check.query('select 1 from pg_stat_activity where pid = $1', [pid])).rowCount ?? 0
      if (rows > 0) await sleep(20)
    }
    t.equal(rows, 0, 'the LISTEN connection is gone')
  })

  t.test('a bad URL or channel fails fast', async (t) => {
    const bad = new URL(url)
    bad.port = '1'
    await t.rejects(createPostgresDoorbell(bad.toString()))
    await t.rejects(createPostgresDoorbell(url, { channel: 'Bad; drop' }), { message: /Invalid doorbell channel/ })
  })
}
