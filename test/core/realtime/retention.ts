import t from 'tap'
import { createDeviceHub } from '../../../lib/core/devicehub.js'
import { silentLogger } from '../../../lib/core/ports.js'
import { createRetentionPruner } from '../../../lib/core/realtime/retention.js'
import { openTestStore } from '../../fixtures/store.js'

const DAY = 86_400_000

t.test('prunes commands and notifications older than the retention, in batches', async (t) => {
  const store = await openTestStore(t)
  let now = Date.UTC(2024, 0, 31)
  const doorbell = await createDeviceHub({ store, admin: { password: 'retention-pass-1' }, clock: { now: () => now }, retentionMs: 30 * DAY })
  t.teardown(() => doorbell.close())
  await store.devices.insert({ id: 'd', name: 'd', data: null, networkId: 1, deviceTypeId: 1, isBlocked: false })
  const base = { deviceId: 'd', networkId: 1, deviceTypeId: 1, parameters: null }
  const longAgo = Date.UTC(2023, 11, 1)
  // Written 61 days before `now`: pruned. Retention counts from the server's write time (by the
  // stamp of each row's last write, which follows the clock: the writes go in time order).
  for (let i = 0; i < 25; i++) await store.notifications.insert({ ...base, notification: 'old' }, longAgo + i)
  const oldCommand = await store.commands.insert({ ...base, command: 'old', userId: null, lifetime: null, status: null, result: null }, longAgo + 30)
  const touched = await store.commands.insert({ ...base, command: 'touched', userId: null, lifetime: null, status: null, result: null }, longAgo + 31)
  const kept = await store.notifications.insert({ ...base, notification: 'new' }, Date.UTC(2024, 0, 30))
  const unsetClock = await store.notifications.insert({ ...base, notification: 'rtc-not-set', timestamp: 0 }, now)
  await store.commands.update('d', touched.id, { status: 'Done' }, now)

  const pruner = createRetentionPruner({ store, clock: { now: () => now }, logger: silentLogger, retentionMs: 30 * DAY, batchSize: 10 })
  t.equal(await pruner.pruneOnce(), 26)
  const left = await store.notifications.query({ scope: { networkIds: 'all', deviceTypeIds: 'all' }, deviceIds: ['d'], sortField: 'timestamp' })
  t.same(left.map((n) => n.id).sort((a, b) => a - b), [kept.id, unsetClock.id], 'a 1970 client timestamp written now is kept')
  t.equal(await store.commands.findById(oldCommand.id), undefined)
  t.ok(await store.commands.findById(touched.id), 'kept: its last update is recent')
  now += 40 * DAY
  t.equal(await doorbell.retention.pruneOnce(), 3, 'the doorbell\'s own pruner uses the configured retention')
  t.equal(await pruner.pruneOnce(), 0)
  await pruner.stop()
})

t.test('start() schedules an unref\'d timer that stop() clears', async (t) => {
  const store = await openTestStore(t)
  let runs = 0
  const counting = { ...store, notifications: { ...store.notifications, prune: async () => { runs++; return 0 } } }
  const pruner = createRetentionPruner({ store: counting, clock: { now: () => Date.now() }, logger: silentLogger, retentionMs: 1000, intervalMs: 10 })
  pruner.start()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.ok(runs >= 2, 'runs periodically')
  await pruner.stop()
  const after = runs
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(runs, after, 'stopped')
})
