/**
 * Stores a notification and rings the hub's doorbell in the same transaction. Every writer of
 * notifications goes through here: the REST insert and the `$device-add` / `$device-update`
 * system notifications of device registration (R3).
 */
import type { ServiceContext } from '../context.js'
import type { Store } from '../ports.js'
import type { NewNotification, NotificationRecord } from './notification-ports.js'

/**
 * Without `input.timestamp` the store assigns one from the message clock (strictly increasing
 * in commit order, R9); a client-given timestamp is stored as given.
 *
 * @example
 * await recordNotification(ctx, { notification: '$device-add', deviceId, networkId, deviceTypeId, parameters }, tx)
 */
export async function recordNotification (ctx: Pick<ServiceContext, 'store' | 'hub' | 'clock'>, input: NewNotification, tx?: Store): Promise<NotificationRecord> {
  const write = async (store: Store): Promise<NotificationRecord> => {
    const row = await store.notifications.insert(input, ctx.clock.now())
    await ctx.hub.publish({
      kind: 'notification',
      id: row.id,
      deviceId: row.deviceId,
      networkId: row.networkId,
      deviceTypeId: row.deviceTypeId,
      name: row.notification
    }, store)
    return row
  }
  return tx === undefined ? ctx.store.transaction(write) : write(tx)
}
