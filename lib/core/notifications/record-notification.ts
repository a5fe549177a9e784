/**
 * Stores a notification and rings the doorbell's doorbell in the same transaction. Every writer of
 * notifications goes through here: the REST insert and the `$device-add` / `$device-update`
 * system notifications of device registration (R3).
 *
 * Inserts that arrive together outside a caller's transaction are group-committed: one
 * transaction, one clock step and one multi-row INSERT for the batch, so the commit cost is
 * shared. A batch that fails is retried row by row, so one bad row fails only its own request.
 * When the doorbell rides the store (PostgreSQL), the store does this itself and rings from the
 * INSERT statement (`Doorbell.storeChannel`).
 */
import type { ServiceContext } from '../context.js'
import type { Store } from '../ports.js'
import type { DoorbellEvent } from '../realtime/doorbell.js'
import type { WriteCombiner } from '../write-combiner.js'
import { createWriteCombiner } from '../write-combiner.js'
import type { NewNotification, NotificationRecord } from './notification-ports.js'

type Ctx = Pick<ServiceContext, 'store' | 'doorbell' | 'clock'>

const MAX_BATCH = 200

/** One insert waiting for its batch; each rings its own context's doorbell (callers may share a store, not a doorbell). */
interface Pending {
  ctx: Ctx
  input: NewNotification
}

const combiners = new WeakMap<Store, WriteCombiner<Pending, NotificationRecord>>()

/** The doorbell event of a stored notification, carrying the record. */
function notificationEvent (row: NotificationRecord): DoorbellEvent {
  const { id, deviceId, networkId, deviceTypeId } = row
  return { kind: 'notification', id, deviceId, networkId, deviceTypeId, name: row.notification, record: row }
}

async function ring (ctx: Ctx, row: NotificationRecord, tx: Store): Promise<void> {
  await ctx.doorbell.publish(notificationEvent(row), tx)
}

async function writeOne (ctx: Ctx, input: NewNotification, tx: Store): Promise<NotificationRecord> {
  const row = await tx.notifications.insert(input, ctx.clock.now())
  await ring(ctx, row, tx)
  return row
}

/** One transaction, one clock step and one multi-row INSERT for the batch (the store's group commit). */
function combinerFor (store: Store): WriteCombiner<Pending, NotificationRecord> {
  let combiner = combiners.get(store)
  if (combiner === undefined) {
    combiner = createWriteCombiner((batch: Pending[]) => store.transaction(async (tx) => {
      const inserted = await tx.notifications.insertMany(batch.map((p) => p.input), batch[0]!.ctx.clock.now())
      for (const [i, row] of inserted.entries()) await ring(batch[i]!.ctx, row, tx)
      return inserted
    }), { maxBatch: MAX_BATCH })
    combiners.set(store, combiner)
  }
  return combiner
}

/**
 * Every row gets a stamp from the message clock (strictly increasing in commit order, R9): its
 * timestamp and the poll cursor. A client-given `input.timestamp` is kept only when the clock
 * can take it (realtime/client-timestamp.ts, issue #23).
 *
 * @example
 * await recordNotification(ctx, { notification: '$device-add', deviceId, networkId, deviceTypeId, parameters }, tx)
 */
export async function recordNotification (ctx: Ctx, input: NewNotification, tx?: Store): Promise<NotificationRecord> {
  // A doorbell that rides the store rings from the insert statement itself; the store then
  // group-commits concurrent inserts on its own (one statement per batch).
  const channel = ctx.doorbell.storeChannel?.(tx ?? ctx.store)
  if (channel !== undefined) {
    const row = await (tx ?? ctx.store).notifications.insert(input, ctx.clock.now(), { channel })
    const event = notificationEvent(row)
    if (tx === undefined) ctx.doorbell.storeRang?.(event)
    else tx.afterCommit(() => ctx.doorbell.storeRang?.(event))
    return row
  }
  if (tx !== undefined) return writeOne(ctx, input, tx)
  return combinerFor(ctx.store).write({ ctx, input })
}
