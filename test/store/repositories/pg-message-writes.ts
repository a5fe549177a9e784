/**
 * A batch insert on PostgreSQL answers one row (its draw's first id and stamp) and the records
 * count up from it in input order (issue #26): they must be the rows as stored, with and without
 * a ring, for notifications and commands, at every input form (values up to three rows, arrays past).
 */
import { sql } from 'kysely'
import pg from 'pg'
import { decodeDoorbellEvents } from '../../../lib/doorbells/postgres-doorbell-wire.js'
import type { MessageEvent } from '../../../lib/core/realtime/bus.js'
import { createQueryTemplates } from '../../../lib/store/query-templates.js'
import { pgInsertCommands, pgInsertNotifications, pgUpdateCommands } from '../../../lib/store/repositories/pg-message-writes.js'
import type { StoreRing } from '../../../lib/core/realtime/store-ring.js'
import { openGenericPlans, recordTexts } from '../../fixtures/generic-plans.js'
import { postgresTest } from '../../fixtures/pg-database.js'
import { openTestStore, testStoreSchemas } from '../../fixtures/store.js'

postgresTest('batch inserts on PostgreSQL answer the rows as stored', async (t, adminUrl) => {
  const store = await openTestStore(t)
  const channel = `devicehub_answer_${process.pid}`
  const listener = new pg.Client({ connectionString: adminUrl })
  await listener.connect()
  t.teardown(() => listener.end())
  const heard: MessageEvent[] = []
  listener.on('notification', (message) => { heard.push(...decodeDoorbellEvents(message.payload ?? '') as MessageEvent[]) })
  await listener.query(`LISTEN ${channel}`)
  const networkId = await store.networks.insert({ name: 'Lab', description: null })
  const deviceTypeId = await store.deviceTypes.insert({ name: 'Sensor', description: null })
  for (const id of ['dev-1', 'dev-2']) await store.devices.insert({ id, name: id, data: null, networkId, deviceTypeId, isBlocked: false })
  const templates = createQueryTemplates()
  const drawn: number[] = []
  const links: Array<{ prev: number, stamp: number, nextXid: number }> = []
  const ring: StoreRing = { channel, drawn: (_record, chain) => { drawn.push(chain.stamp); links.push(chain) } }
  const answered: Array<{ kind: string, record: object }> = []

  const stored = async (table: 'notifications' | 'commands') => (await sql<{ id: string, clock_ts: string, device_id: string, name: string }>`
    select id, clock_ts, device_id, ${sql.ref(table === 'notifications' ? 'notification' : 'command')} as name
    from ${sql.table(table)} order by id`.execute(store.db)).rows
    .map((row) => ({ id: Number(row.id), stamp: Number(row.clock_ts), deviceId: row.device_id, name: row.name }))

  const notifications = []
  const commands = []
  const ringed: number[] = []
  // Values that need JSON escaping, nulls and a record too large for NOTIFY (sent without it).
  const tricky = 'q " b \\ c \u0001 \n ü € 𝄞'
  const parametersOf = (i: number) => i % 3 === 0 ? null : i % 3 === 1 ? { i, tricky } : { blob: 'x'.repeat(7100) }
  let n = 0
  for (const size of [1, 2, 3, 4, 9]) {
    for (const withRing of [false, true]) {
      const list = Array.from({ length: size }, () => n++)
      const rows = await pgInsertNotifications(store.db, templates, list.map((i) => ({
        notification: `note-${i}${tricky}`, deviceId: `dev-${1 + (i % 2)}`, networkId, deviceTypeId, parameters: parametersOf(i)
      })), Date.now(), withRing ? ring : undefined)
      t.same(rows.map((r) => r.notification), list.map((i) => `note-${i}${tricky}`), `${size} notification(s), ring ${withRing}: input order`)
      notifications.push(...rows.map((r) => ({ id: r.id, stamp: r.stamp, deviceId: r.deviceId, name: r.notification })))
      if (withRing) ringed.push(...rows.map((r) => r.stamp))
      if (withRing) answered.push(...rows.map((record) => ({ kind: 'notification', record })))
      const made = await pgInsertCommands(store.db, templates, list.map((i) => ({
        command: `cmd-${i}`, deviceId: `dev-${1 + (i % 2)}`, networkId, deviceTypeId, userId: i % 2 === 0 ? 1 : null,
        parameters: parametersOf(i + 1), lifetime: i % 2 === 0 ? 30 : null, status: i % 2 === 0 ? tricky : null,
        result: i % 2 === 0 ? { ok: true } : null
      })), Date.now(), withRing ? ring : undefined)
      t.same(made.map((r) => r.command), list.map((i) => `cmd-${i}`), `${size} command(s), ring ${withRing}: input order`)
      commands.push(...made.map((r) => ({ id: r.id, stamp: r.stamp, deviceId: r.deviceId, name: r.command })))
      if (withRing) ringed.push(...made.map((r) => r.stamp))
      if (withRing) answered.push(...made.map((record) => ({ kind: 'command', record })))
    }
  }
  t.same(notifications, await stored('notifications'), 'every notification record has the id and stamp of its stored row')
  t.same(commands, await stored('commands'), 'every command record has the id and stamp of its stored row')
  t.same(drawn, ringed, 'the ring was told of every row written with it, at its stamp')
  t.equal(new Set([...notifications, ...commands].map((r) => r.stamp)).size, notifications.length + commands.length, 'no stamp twice')

  // Every event read back from the NOTIFYs (packs built in Node past one row, in SQL for one) is the answered record's.
  const deadline = Date.now() + 5000
  while (heard.length < answered.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  const tooLarge = (record: object) => Buffer.byteLength(JSON.stringify(record)) > 7000
  t.same(heard.map((e) => e.kind), answered.map((a) => a.kind), 'an event for every row written with the ring, in order')
  t.same(heard.map((e) => e.record), answered.map((a) => tooLarge(a.record) ? undefined : a.record),
    'each with the record the writer answered, unless too large for NOTIFY')
  t.same(heard.map((e) => e.order), links, 'each with the link the ring was told')
})

postgresTest('a command update\'s generic plan finds commands by primary key, even made on a new table', async (t, adminUrl) => {
  // A cached generic plan made while `commands` was new (never analyzed) is kept as the table grows:
  // any scan but the primary key's lookup grows with the table (issue #26: 0.5 ms at 500 rows, 20-67 ms at 200,000).
  const store = await openTestStore(t)
  const networkId = await store.networks.insert({ name: 'Lab', description: null })
  const deviceTypeId = await store.deviceTypes.insert({ name: 'Sensor', description: null })
  await store.devices.insert({ id: 'dev-1', name: 'dev-1', data: null, networkId, deviceTypeId, isBlocked: false })
  const { texts, executor } = recordTexts()
  const templates = createQueryTemplates({ direct: executor })
  const made = await pgInsertCommands(store.db, templates, Array.from({ length: 5 }, () => ({
    command: 'c', deviceId: 'dev-1', networkId, deviceTypeId, userId: null, parameters: null, lifetime: null, status: null, result: null
  })), Date.now())
  const ring: StoreRing = { channel: `devicehub_plan_${process.pid}`, drawn: () => {} }
  for (const [count, withRing] of [[1, false], [5, false], [1, true], [5, true]] as const) {
    const updated = await pgUpdateCommands(store.db, templates, made.slice(0, count).map((c) => ({
      deviceId: 'dev-1', id: c.id, patch: { status: 'Done' }
    })), Date.now(), withRing ? ring : undefined)
    t.equal(updated.filter((c) => c?.status === 'Done').length, count, `${count} update(s), ring ${withRing}: applied`)
  }
  const updates = [...texts].filter((text) => text.includes('update commands'))
  t.equal(updates.length, 4, 'a statement text per input form and ring')
  const plans = await openGenericPlans(t, adminUrl, testStoreSchemas.get(store)!)
  for (const [i, text] of updates.entries()) {
    const scans = (await plans.explain(text)).join('\n').match(/\b\w+ Scan[^(\n]* on commands\b/g) ?? []
    t.same(scans, Array(2).fill('Index Scan using commands_pkey on commands'),
      `statement ${i}: both of its reads of commands are primary-key lookups`)
  }
})
