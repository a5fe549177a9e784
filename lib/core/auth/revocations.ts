/**
 * Revocation reaches open waits (issue #16). Whatever changes a user's rights (role, status,
 * password, network or device-type assignments, deletion; a deleted network or device type
 * for everyone) rings a `revoke` doorbell in its write transaction. Everything that waits on
 * the doorbell for a principal (parked long polls now, WebSocket subscriptions later) checks
 * each `revoke` with {@link revokes} and stops: a poll answers `[]` at once, so the client's
 * next request is authenticated again under the new rights. The doorbell carries the event to
 * every instance (PostgreSQL NOTIFY) and only after commit; no extra listener or registry.
 */
import type { Store } from '../ports.js'
import type { PluginRecord } from '../plugins/plugin-ports.js'
import type { Doorbell, DoorbellEvent } from '../realtime/doorbell.js'
import type { Principal } from './principal.js'

/** `revoke` for every user: a network or device type (and its assignments) is gone. */
export const EVERY_USER = 0

/** The user whose rights a principal carries (the owner's, for a plugin); undefined for the system principal. */
export function principalUserId (principal: Principal | undefined): number | undefined {
  if (principal === undefined) return undefined
  return principal.kind === 'user' ? principal.user.id : principal.kind === 'plugin' ? principal.owner.id : undefined
}

/**
 * Rings the `revoke` doorbell for `userId` (or {@link EVERY_USER}); inside `tx` when given, so
 * it is heard only if the change commits.
 *
 * @example
 * await store.transaction(async (tx) => { await tx.users.update(id, { role: 1 }); await revokeUser(doorbell, id, tx) })
 */
export async function revokeUser (doorbell: Doorbell, userId: number, tx?: Store): Promise<void> {
  await doorbell.publish({ kind: 'revoke', id: userId, deviceId: '', networkId: null, deviceTypeId: null, name: '' }, tx)
}

/**
 * Whether a doorbell event revokes what `userId` was granted (the id of {@link principalUserId};
 * undefined, the system principal, is never revoked).
 *
 * @example
 * doorbell.subscribe((event) => { if (revokes(event, userId)) subscription.close() })
 */
export function revokes (event: DoorbellEvent, userId: number | undefined): boolean {
  // A revoke naming a plugin concerns that plugin's tokens only, not its owner's own.
  return event.kind === 'revoke' && event.name === '' && userId !== undefined && (event.id === EVERY_USER || event.id === userId)
}

/**
 * Rings `revoke` for one plugin's tokens (issue 22): its reach narrowed or it was deleted. The
 * event names the owner (`id`) and the plugin's topic (`name`), so the owner's own waits go on.
 *
 * @example
 * await store.transaction(async (tx) => { await tx.plugins.delete(plugin.id); await revokePlugin(doorbell, plugin, tx) })
 */
export async function revokePlugin (doorbell: Doorbell, plugin: Pick<PluginRecord, 'userId' | 'topicName'>, tx?: Store): Promise<void> {
  await doorbell.publish({ kind: 'revoke', id: plugin.userId, deviceId: '', networkId: null, deviceTypeId: null, name: plugin.topicName }, tx)
}

/**
 * Whether a doorbell event revokes what `principal` was granted: {@link revokes} for its
 * user (a plugin's owner included), and a plugin revocation for the tokens of that plugin.
 *
 * @example
 * doorbell.subscribe((event) => { if (revokesPrincipal(event, principal)) subscription.close() })
 */
export function revokesPrincipal (event: DoorbellEvent, principal: Principal | undefined): boolean {
  if (event.kind !== 'revoke') return false
  if (event.name === '') return revokes(event, principalUserId(principal))
  return principal?.kind === 'plugin' && principal.plugin.topicName === event.name
}
