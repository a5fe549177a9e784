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
import type { NewNotification, NotificationRecord } from './notification-ports.js'

type Ctx = Pick<ServiceContext, 'store' | 'doorbell' | 'clock'>

const MAX_BATCH = 200

interface Pending {
  /** Each request rings its own context's doorbell (callers may share a store, not a doorbell). */
  ctx: Ctx
  input: NewNotification
  resolve(row: NotificationRecord): void
  reject(error: unknown): void
}

interface Batcher {
  enqueue(ctx: Ctx, input: NewNotification): Promise<NotificationRecord>
}

const batchers = new WeakMap<Store, Batcher>()

async function ring (ctx: Ctx, row: NotificationRecord, tx: Store): Promise<void> {
  await ctx.doorbell.publish({
    kind: 'notification',
    id: row.id,
    deviceId: row.deviceId,
    networkId: row.networkId,
    deviceTypeId: row.deviceTypeId,
    name: row.notification
  }, tx)
}

async function writeOne (ctx: Ctx, input: NewNotification, tx: Store): Promise<NotificationRecord> {
  const row = await tx.notifications.insert(input, ctx.clock.now())
  await ring(ctx, row, tx)
  return row
}

function createBatcher (store: Store): Batcher {
  let queue: Pending[] = []
  let active = false

  async function flush (): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH)
      queue = queue.slice(batch.length)
      try {
        const rows = await store.transaction(async (tx) => {
          const inserted = await tx.notifications.insertMany(batch.map((p) => p.input), batch[0]!.ctx.clock.now())
          for (const [i, row] of inserted.entries()) await ring(batch[i]!.ctx, row, tx)
          return inserted
        })
        batch.forEach((p, i) => p.resolve(rows[i]!))
      } catch {
        for (const p of batch) {
          await store.transaction((tx) => writeOne(p.ctx, p.input, tx)).then(p.resolve, p.reject)
        }
      }
    }
    active = false
  }

  return {
    enqueue (ctx, input) {
      return new Promise<NotificationRecord>((resolve, reject) => {
        queue.push({ ctx, input, resolve, reject })
        if (active) return
        active = true
        // Let the requests that arrived in the same turn join the batch.
        setImmediate(() => { void flush() })
      })
    }
  }
}

/**
 * Every row gets a stamp from the message clock (strictly increasing in commit order, R9), the
 * poll cursor; without `input.timestamp` it is also the row's timestamp, a client-given one is
 * stored and shown as given.
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
    const event = { kind: 'notification' as const, id: row.id, deviceId: row.deviceId, networkId: row.networkId, deviceTypeId: row.deviceTypeId, name: row.notification }
    if (tx === undefined) ctx.doorbell.storeRang?.(event)
    else tx.afterCommit(() => ctx.doorbell.storeRang?.(event))
    return row
  }
  if (tx !== undefined) return writeOne(ctx, input, tx)
  let batcher = batchers.get(ctx.store)
  if (batcher === undefined) {
    batcher = createBatcher(ctx.store)
    batchers.set(ctx.store, batcher)
  }
  return batcher.enqueue(ctx, input)
}
