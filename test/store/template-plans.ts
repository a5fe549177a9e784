/**
 * On PostgreSQL every query template is a named prepared statement, and PostgreSQL keeps a
 * template's generic plan once it has chosen it: a plan made while the tables were new (never
 * analyzed: ten pages assumed) stays while they grow. Each template's generic plan, made on a new
 * schema, must therefore read commands and notifications by index, and find a message by id
 * through the primary key (issue #26: the device's index filtered by id, and a sequential scan
 * under a hash join, grew with the table to 20-67 ms per command update at 200,000 rows).
 */
import { FULL_SCOPE } from '../../lib/core/values.js'
import type { MessageSelector } from '../../lib/core/realtime/message-filter.js'
import { postgresDialect } from '../../lib/store/dialects/postgres.js'
import { createKyselyStore } from '../../lib/store/kysely-store.js'
import { PREPARED_MARK } from '../../lib/store/dialects/prepared-statements.js'
import { openGenericPlans, recordTexts } from '../fixtures/generic-plans.js'
import { postgresTest } from '../fixtures/pg-database.js'
import { openTestStore, testStoreSchemas } from '../fixtures/store.js'

/** The scans of commands and notifications in a plan, each with its filter ('' without one). */
function messageScans (plan: string[]): Array<{ scan: string, filter: string }> {
  const scans: Array<{ scan: string, filter: string }> = []
  for (const [i, line] of plan.entries()) {
    const scan = /\b\w+ Scan\b[^(]* on (commands|notifications)\b/.exec(line)?.[0]
    if (scan === undefined) continue
    // A node's properties (`Index Cond: ...`, `Filter: ...`) are the lines under it up to the next node.
    const end = plan.findIndex((next, j) => j > i && !/^\s*[A-Z][\w ]*:/.test(next))
    const properties = plan.slice(i + 1, end === -1 ? undefined : end)
    scans.push({ scan, filter: properties.find((property) => /^\s*Filter:/.test(property))?.trim() ?? '' })
  }
  return scans
}

postgresTest('every query template\'s generic plan reads messages by index, by primary key for an id', async (t, adminUrl) => {
  const base = await openTestStore(t)
  // The store's own templates, each text recorded as it runs.
  const { texts, executor } = recordTexts()
  const store = createKyselyStore(base.db, postgresDialect, { directExecutor: () => executor })
  const networkId = await store.networks.insert({ name: 'Lab', description: null })
  const deviceTypeId = await store.deviceTypes.insert({ name: 'Sensor', description: null })
  for (const id of ['dev-1', 'dev-2']) await store.devices.insert({ id, name: id, data: null, networkId, deviceTypeId, isBlocked: false })
  await store.devices.findById('dev-1')
  const command = { command: 'c', deviceId: 'dev-1', networkId, deviceTypeId, userId: null, parameters: null, lifetime: 30, status: null, result: null }
  const made = await Promise.all([1, 2, 3, 4, 5].map(() => store.commands.insert(command, Date.now())))
  await store.commands.update('dev-1', made[0]!.id, { status: 'Done' }, Date.now())
  await Promise.all(made.slice(1).map((c) => store.commands.update('dev-1', c.id, { result: { ok: true } }, Date.now())))
  t.ok(await store.commands.findById(made[0]!.id), 'a command by id')
  t.ok(await store.commands.findForDevice('dev-1', made[0]!.id), 'a command by id for its device')
  const notification = { notification: 'n', deviceId: 'dev-1', networkId, deviceTypeId, parameters: null }
  await store.notifications.insert(notification)
  await store.notifications.insertMany(Array(5).fill(notification), Date.now())
  await store.presence.refresh(['dev-1'], Date.now(), 0)
  const upTo = await store.feed.position()
  const after = { clock: 0, notification: 0, command: 0 }
  const selectors: MessageSelector[] = [
    { scope: FULL_SCOPE }, { scope: FULL_SCOPE, deviceIds: ['dev-1'] }, { scope: FULL_SCOPE, deviceIds: ['dev-1'], names: ['c', 'n'] },
    { scope: { networkIds: [networkId], deviceTypeIds: 'all' } }, { scope: { networkIds: [networkId], deviceTypeIds: [deviceTypeId] } }
  ]
  for (const selector of selectors) {
    await store.feed.notifications({ selector, after, upTo, limit: 100 })
    await store.feed.commands({ selector, after, upTo, limit: 100 })
    await store.feed.updates({ selector, after, upTo, limit: 100 })
  }

  const templates = [...texts].filter((text) => text.startsWith(PREPARED_MARK))
  t.ok(templates.length >= 15, `the workload ran the templates (${templates.length})`)
  const plans = await openGenericPlans(t, adminUrl, testStoreSchemas.get(base)!)
  for (const text of templates) {
    const plan = await plans.explain(text)
    const name = text.slice(PREPARED_MARK.length, PREPARED_MARK.length + 90).replace(/\s+/g, ' ')
    for (const { scan, filter } of messageScans(plan)) {
      t.notMatch(scan, /^Seq Scan/, `${name}…: ${scan} is by index`)
      // An id compared in a filter, not in the index condition: `id = $1`, `(m.id = id)`; never device_id.
      t.notMatch(filter, /(?<!\w)id = |= (\w+\.)?id\b/, `${name}…: ${scan} has no id in a filter (ids by the primary key)`)
    }
  }
})
