/**
 * No lock is held until commit on PostgreSQL (migration 0006): a write that drew stamp 1 may commit
 * after one that drew stamp 2. A cursor reader must still get 1 before 2, and a write that drew and
 * failed (a hole in the draw) must not hold anybody back for good.
 */
import type { StoreRing } from '../../lib/core/commands/command-ports.js'
import type { NewNotification } from '../../lib/core/notifications/notification-ports.js'
import { DEFAULT_HUB_CHANNEL } from '../../lib/doorbells/postgres-doorbell.js'
import type { Test } from 'tap'
import { startServer } from '../../lib/start-server.js'
import { call, sleep } from '../fixtures/messaging.js'
import { createTestDatabase, postgresTest } from '../fixtures/pg-database.js'

const RING: StoreRing = { channel: DEFAULT_HUB_CHANNEL, drawn: () => {} }

const notification = (name: string, deviceId: string): NewNotification =>
  ({ notification: name, deviceId, networkId: 1, deviceTypeId: null, parameters: null })

/** A server on a fresh database with one device that has written one notification ('before'). */
async function serverWithDevice (t: Test, adminUrl: string, device: string) {
  const db = await createTestDatabase(t, adminUrl)
  const server = await startServer({ db, jwtSecret: 'order-test-secret', admin: { password: 'order-test-password' } })
  t.teardown(() => server.close())
  const { accessToken: token } = await server.adminTokens()
  const base = server.url
  t.equal((await call(`${base}/device/${device}`, token, { method: 'PUT', body: { name: device, networkId: 1 } })).status, 204)
  const first = await call(`${base}/device/${device}/notification`, token, { method: 'POST', body: { notification: 'before' } })
  return { db, server, token, base, first: first.body.timestamp as string }
}

// The open transaction is this instance's own (its log writes it: its event comes from the
// statement's answer, at commit) or another instance's (its event comes as a NOTIFY).
for (const writer of ['this instance', 'another instance'] as const) {
  postgresTest(`a write committed out of stamp order reaches cursor readers in stamp order (${writer})`, async (t, adminUrl) => {
    await outOfOrder(t, adminUrl, writer)
  })
}

async function outOfOrder (t: Test, adminUrl: string, writer: 'this instance' | 'another instance'): Promise<void> {
  const { db, server, token, base, first } = await serverWithDevice(t, adminUrl, 'ooo-1')
  let cursor = first
  const other = writer === 'this instance' ? undefined : await startServer({ db, jwtSecret: 'order-test-secret' })
  if (other !== undefined) t.teardown(() => other.close())
  const hub = (other ?? server).hub

  // A transaction draws stamp s1 and stays open; a plain write then draws s2 > s1 and commits.
  let commitSlow!: () => void
  const held = new Promise<void>((resolve) => { commitSlow = resolve })
  let slowId = 0
  const slow = hub.store.transaction(async (tx) => {
    slowId = (await hub.log.append({ kind: 'notification', input: notification('slow', 'ooo-1') }, tx)).id
    await held
  })
  while (slowId === 0) await sleep(5)
  const fast = await call(`${base}/device/ooo-1/notification`, token, { method: 'POST', body: { notification: 'fast' } })
  t.equal(fast.status, 201)
  t.ok(fast.body.id > slowId, 'the committed write drew after the open one')
  const query = await call(`${base}/device/ooo-1/notification?sortField=timestamp&sortOrder=ASC`, token)
  const names = query.body.map((n: { notification: string }) => n.notification).filter((name: string) => !name.startsWith('$'))
  t.same(names, ['before', 'fast'], 'a plain query already sees the committed write')

  const early = await call(`${base}/device/ooo-1/notification/poll?timestamp=${cursor}&waitTimeout=0`, token)
  t.same(early.body, [], 'a poll does not hand out stamp 2 while stamp 1 may still commit')
  const parked = call(`${base}/device/ooo-1/notification/poll?timestamp=${cursor}&waitTimeout=10`, token)
  await sleep(100)
  commitSlow()
  await slow
  // Re-poll by the last cursor received, as a DeviceHive client does, until both have come.
  const received: string[] = []
  let answer = await parked
  for (let polls = 0; polls < 5 && received.length < 2; polls++) {
    if (polls > 0) answer = await call(`${base}/device/ooo-1/notification/poll?timestamp=${cursor}&waitTimeout=1`, token)
    for (const n of answer.body as Array<{ notification: string, timestamp: string }>) received.push(n.notification)
    if (answer.body.length > 0) cursorAt(answer.body[answer.body.length - 1].timestamp)
  }
  t.same(received, ['slow', 'fast'], 'stamp 1, then stamp 2, each once')
  // No assertion on resyncs here: on a loaded machine a NOTIFY can trail the settled check, and the
  // (harmless) resync that follows is timing, not order.
  t.equal(server.hub.stats.doorbellOrder.waiting, 0, 'nothing left waiting')

  function cursorAt (timestamp: string): void {
    cursor = timestamp
  }
}

postgresTest('a write that drew and failed leaves a hole that resolves into a re-read', async (t, adminUrl) => {
  const { server, token, base, first } = await serverWithDevice(t, adminUrl, 'hole-1')
  const parked = call(`${base}/device/hole-1/notification/poll?timestamp=${first}&waitTimeout=10`, token)
  await sleep(100)

  // Draws its stamp, then fails (a device id longer than the column): the stamp is never written.
  await t.rejects(server.hub.store.transaction(async (tx) => {
    await tx.notifications.insert(notification('never', 'x'.repeat(60)), Date.now(), RING)
  }))
  const started = Date.now()
  const after = await call(`${base}/device/hole-1/notification`, token, { method: 'POST', body: { notification: 'after' } })
  t.equal(after.status, 201)
  const woken = await parked
  t.same(woken.body.map((n: { notification: string }) => n.notification), ['after'], 'the item after the hole arrives')
  t.ok(Date.now() - started < 5000, `within seconds (${Date.now() - started} ms)`)
  t.ok(server.hub.stats.doorbellOrder.resyncs >= 1, 'through a resync')
})
